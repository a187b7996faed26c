import { createInterface } from 'node:readline';
import { useReaders } from '../adapters/link-updater/parsers';
import { mark } from '../stages';
import { VERIFIER_MEMO_DIR_ENV } from './memo-dir';
import { EndRunRequestSchema } from './end-run';
import { forgetRun, PrepareRequestSchema, preloadMemo, prepare, saveMemos, verify, VerifyRequestSchema } from './verify';

mark('verifier: process started', true);
mark('verifier: modules loaded');

// The verifier reads with parsers of its own (htmlparser2, markdown-it; the adapter's are parse5,
// micromark): its count is a second reading of the bytes, not the adapter's parsers run again.
useReaders('verifier');

// The runner's memo, read now, while this process waits for its first request (spawn.ts).
const memoDir = process.env[VERIFIER_MEMO_DIR_ENV];
if (memoDir) preloadMemo(memoDir);

/**
 * The verifier as its own process: one JSON request a line on stdin, one DtaVerifier a line on
 * stdout for each verify request (a prepare request has no answer). Requests run one after
 * another; the process ends with its stdin. Nothing of the adapter's memory reaches it. An end-run
 * request closes a run: the memo is saved, the run forgotten, and the answer says whether this
 * process may serve the next run (spawn.ts keeps it warm) — not after a crash in this run.
 */
function answer(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function failed(why: string): unknown {
  return { passed: false, checks: [], failures: [why], sample_size: 0 };
}

/** A request of this run crashed: the process ends with the run instead of serving the next. */
let crashed = false;

async function endRun(): Promise<void> {
  await saveMemos();
  await forgetRun();
  mark('verifier: run ended');
  answer({ ready: !crashed });
}

async function handle(line: string): Promise<void> {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return answer(failed('bad verify request: not JSON'));
  }
  if ((raw as { mode?: unknown } | null)?.mode === 'prepare') {
    const p = PrepareRequestSchema.safeParse(raw);
    // A bad or failed prepare only loses its head start: the verify request measures everything.
    if (p.success) await prepare(p.data).catch(() => undefined);
    mark('verifier: prepared');
    return;
  }
  if (EndRunRequestSchema.safeParse(raw).success) return endRun();
  const parsed = VerifyRequestSchema.safeParse(raw);
  if (!parsed.success) return answer(failed(`bad verify request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`));
  mark(`verifier: ${parsed.data.mode} request`);
  try {
    answer(await verify(parsed.data));
    mark('verifier: answered');
  } catch (err) {
    crashed = true;
    answer(failed(`verifier crashed: ${err instanceof Error ? err.message : String(err)}`));
  }
}

let queue = Promise.resolve();
createInterface({ input: process.stdin })
  .on('line', (line) => {
    if (line.trim()) queue = queue.then(() => handle(line));
  })
  // The memo is written once, when the runner is done with this process (after the apply, or
  // when a kept dry-run's proposal expires): while it is kept, its own memory answers.
  .on('close', () => void queue.then(saveMemos));

import { EXIT, execute, exitCodeFor, sendResult } from './executor';
import { parseInvocation } from './invocation';
import { errorText } from '../../../common/error-text';

/**
 * The deterministic executor: reads one invocation (schema 2.2) on stdin, runs its command with
 * argv built from the parameters, sends the `result` event to the runner's gateway and exits with
 * the command's exit code. Diagnostics go to stderr; stdout stays empty.
 */
/** How often the executor checks that the runner that started it is still there. */
const PARENT_CHECK_MS = 1_000;

const log = (line: string) => process.stderr.write(`[deterministic-exec] ${line}\n`);

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<number> {
  const parsed = parseInvocation(await readStdin());
  if (!parsed.ok) {
    log(parsed.error);
    return EXIT.BAD_INVOCATION;
  }
  const inv = parsed.invocation;
  // Asked to stop (the runner is shutting down): the command's whole group goes too, and the
  // result still says what happened.
  const abort = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => abort.abort());
  // The runner that started us died (we were re-parented): nobody will take the result, so stop.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) abort.abort();
  }, PARENT_CHECK_MS).unref();
  const result = await execute(inv, process.env, abort.signal);
  if (result.spawn_error) log(result.spawn_error);
  else if (result.timed_out) log(`timed out after ${inv.timeout_seconds ?? 'the default'} s; the command was stopped`);
  try {
    await sendResult(inv, result);
  } catch (err) {
    log(`could not send the result to ${inv.gateway_url}: ${errorText(err)}`);
    return EXIT.GATEWAY_FAILED;
  }
  return exitCodeFor(result);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);

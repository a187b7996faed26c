/**
 * What redaction adds (issue 10). Prints figures; asserts nothing about time.
 *   (a) ordinary typing: each key's echo is one chunk. Added latency per chunk (p50/p99) of the
 *       stream redactor vs no redaction, and the share of keys whose echo was held until the next
 *       key (a held echo waits for that key, however long it takes: no timer releases it).
 *       Measured with the built-in rules only, and with an org of 20 secrets.
 *   (b) CPU per MB on bulk output of several kinds (numbered lines, coloured build logs, source,
 *       JSON, CSV, coloured test output, base64, ls -l, this repo's own .ts files), each beside a
 *       floor (no redaction) and beside the redactor of another commit (BENCH_BASE) run in the same
 *       process, with whether all released the same bytes. Each is pushed in 64 KB chunks (a
 *       runner's batch under a flood) and in BENCH_CHUNK_KB chunks (default 4: one PTY read, what
 *       a batch holds when output is not flooding), and the small chunks' cost is given as a
 *       multiple of the big ones' (issue 17: at most ~1.3×).
 * Usage: npm run bench:redaction (BENCH_MB, BENCH_CHUNK_KB, BENCH_REPEAT, BENCH_ROUNDS, BENCH_BASE)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCorpus, seeded } from '../common/redact/corpus';
import { OUTPUT_KINDS } from '../common/redact/output-kinds';
import { createStreamRedactor, DEFAULT_RULES, type SecretInput, type StreamRedactor } from '../common/redact';

const TYPING_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const BULK_MB = Number(process.env.BENCH_MB ?? 8);
/** A runner's batch under a flood (OUTPUT_BATCH_MAX_CHARS). */
const BIG_CHUNK = 120 * 1024;
/** One PTY read (4095 characters): what a batch holds when output is not flooding. */
const SMALL_CHUNK = Number(process.env.BENCH_CHUNK_KB ?? 4) * 1024;
const BULK_REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
/** Each kind of output is a sample this long, pushed again and again. */
const SAMPLE_CHARS = 1024 * 1024;
/**
 * The default baseline: the redactor before its per-push copies were removed (issue 17's garbage
 * work). BENCH_BASE=afecd56 is the one before the per-push work (a 4 KB push then cost 1.3–2× its
 * share of a big one), e215165 the one before the prefilter.
 */
const BASE_COMMIT = '8439dbb';
/** MB pushed per cell of the allocation table (c). */
const ALLOC_MB = Number(process.env.BENCH_ALLOC_MB ?? 4);
/**
 * Bytes between heap samples: V8's default (32 KB) would miss most of a push's small objects; the
 * sampler scales each sample by its chance of being taken, so the sum estimates every byte.
 */
const ALLOC_SAMPLING_BYTES = 256;

const COMMANDS = ['git status', 'ls -la src/', 'npm test -- --watch=false', 'cd packages/api && make build', 'vim README.md', 'grep -rn "TODO" lib | head', 'docker compose up -d db', 'kubectl get pods -n staging'];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const us = (ns: number) => `${(ns / 1000).toFixed(1)} µs`;

function typing(secrets: SecretInput, redact: boolean) {
  const r = createStreamRedactor(DEFAULT_RULES, secrets);
  const times: number[] = [];
  let held = 0;
  let keys = 0;
  for (let round = 0; round < TYPING_ROUNDS; round++) {
    for (const cmd of COMMANDS) {
      for (const ch of cmd) {
        const t0 = process.hrtime.bigint();
        const out = redact ? r.push(ch) : ch;
        times.push(Number(process.hrtime.bigint() - t0));
        keys++;
        if (out.length === 0) held++;
      }
      // Enter: the echo of \r, the command's output and the next prompt arrive as one chunk.
      const out = redact ? r.push('\r\n' + 'output line of the command\r\n'.repeat(3) + 'dev@box:~/app$ ') : '';
      if (redact && !out.endsWith('$ ')) held++;
    }
  }
  return { p50: pct(times, 50), p99: pct(times, 99), held: held / keys };
}

type PushFn = (chunk: string) => string;
interface StreamLike {
  push: PushFn;
  end(): string;
}
type MakeStream = (secrets: SecretInput) => StreamRedactor;

/**
 * `text` in `size` chunks as a hop gets them: flat strings of their own (the runner's batch is a
 * join of PTY reads, the control plane's chunk is decoded from a frame), not slices of the sample,
 * which every character read would go through.
 */
function chunksOf(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(Buffer.from(text.slice(at, at + size), 'utf8').toString('utf8'));
  return out;
}

/**
 * CPU ms per MB of pushing `text` in `size` chunks, BULK_MB in all: the least of BULK_REPEAT runs
 * (on a shared machine the neighbours only ever add to a run's CPU time: caches, frequency, the
 * collector finishing someone else's garbage; a median of 3 still moved 1.4x between runs).
 */
function cpuPerMb(text: string, size: number, make: () => StreamLike): number {
  const total = BULK_MB * 1024 * 1024;
  const times: number[] = [];
  const chunks = chunksOf(text, size);
  for (let rep = 0; rep < BULK_REPEAT; rep++) {
    const r = make();
    r.push(chunks[0]); // the first push builds the redactor's tables (once per session)
    // CPU time, not wall time: on a shared, loaded machine wall time measures the neighbours.
    const c0 = process.cpuUsage();
    let done = 0;
    while (done < total) {
      for (let k = 0; k < chunks.length && done < total; k++) {
        r.push(chunks[k]);
        done += chunks[k].length;
      }
    }
    r.end();
    const c = process.cpuUsage(c0);
    times.push((c.user + c.system) / 1000 / (done / (1024 * 1024)));
  }
  return Math.min(...times);
}

/** Everything a fresh redactor releases for `text` pushed in `size` chunks, then ended. */
function outputOf(text: string, size: number, make: () => StreamLike): string {
  const r = make();
  let out = '';
  for (let at = 0; at < text.length; at += size) out += r.push(text.slice(at, at + size));
  return out + r.end();
}

/**
 * The redactor of another commit (BENCH_BASE, default: the commit this work started from), run in
 * the same process: its common/redact tree is copied out of git into a temp dir (never committed).
 */
async function baseRedactor(): Promise<{ label: string; make: MakeStream } | null> {
  const base = process.env.BENCH_BASE ?? BASE_COMMIT;
  try {
    const root = path.resolve(import.meta.dirname, '..');
    const hash = execFileSync('git', ['-C', root, 'rev-parse', '--short', base], { encoding: 'utf8' }).trim();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redact-base-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    execFileSync('sh', ['-c', `git -C "${root}" archive ${hash} common/redact | tar -x -C "${dir}"`]);
    // An ES module like the tree's own copy: without this package.json tsx compiles the copy to
    // CommonJS, where every use of an imported name is a getter call, and the baseline ran slower
    // than the same code does in the tree.
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
    const mod = (await import(pathToFileURL(path.join(dir, 'common/redact/index.ts')).href)) as typeof import('../common/redact');
    return { label: `start ${hash}`, make: (secrets) => mod.createStreamRedactor(mod.DEFAULT_RULES, secrets) };
  } catch (err) {
    console.log(`(no baseline redactor from ${base}: ${(err as Error).message.split('\n')[0]})`);
    return null;
  }
}

/** A 1 MB sample of each kind of output, and the project's own TypeScript as `cat` prints it. */
function samples(): Array<[string, string]> {
  const out: Array<[string, string]> = OUTPUT_KINDS.map((k, n) => [k.name, k.make(seeded(100 + n), SAMPLE_CHARS)]);
  const root = path.resolve(import.meta.dirname, '..');
  let src = '';
  for (const dir of ['common/redact', 'server/services', 'runner/sessions']) {
    for (const f of fs.readdirSync(path.join(root, dir))) if (f.endsWith('.ts') && src.length < SAMPLE_CHARS) src += fs.readFileSync(path.join(root, dir, f), 'utf8');
  }
  out.push(['this repo\'s .ts files (cat)', src.replace(/\r?\n/g, '\r\n').slice(0, SAMPLE_CHARS)]);
  return out;
}

/**
 * Every kind of output through both redactors at both chunk sizes once before anything is timed: a
 * session's redactor runs the JIT's optimised code, and without this the first rows timed (and
 * whichever chunk size came first) paid for the compiler's warm-up instead of for redaction.
 */
function warmUp(texts: ReadonlyArray<[string, string]>, makers: MakeStream[], orgSecrets: SecretInput): void {
  for (const make of makers) {
    for (const secrets of [{}, orgSecrets]) {
      for (const size of [BIG_CHUNK, SMALL_CHUNK]) {
        for (const [, text] of texts) {
          const r = make(secrets);
          for (let at = 0; at < text.length; at += size) r.push(text.slice(at, at + size));
          r.end();
        }
      }
    }
  }
}

type Base = Awaited<ReturnType<typeof baseRedactor>>;

async function bulk(orgSecrets: SecretInput, base: Base) {
  const now: MakeStream = (secrets) => createStreamRedactor(DEFAULT_RULES, secrets);
  const floor = () => ({ push: (c: string) => (Buffer.from(c, 'utf8'), c), end: () => '' });
  const texts = samples();
  warmUp(texts, base ? [base.make, now] : [now], orgSecrets);
  const big = `${BIG_CHUNK / 1024} KB`;
  const small = `${SMALL_CHUNK / 1024} KB`;
  console.log(`\nbulk output, ${BULK_MB} MB per cell in ${big} and in ${small} chunks, CPU ms per MB (least of ${BULK_REPEAT}; MB/s in brackets); floor: UTF-8 encoding the chunk, no redaction; load ${os.loadavg()[0]!.toFixed(2)}`);
  const start = base?.label ?? 'start';
  console.log(`| output | secrets | floor | ${start}, ${big} | now, ${big} | now vs start | ${start}, ${small} | now, ${small} | now, ${small} ÷ ${big} | same output |`);
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const ratios: number[] = [];
  for (const [name, text] of texts) {
    for (const [label, secrets] of [['built-in', {}], ['+20 org', orgSecrets]] as const) {
      const mkBase = base ? () => base.make(secrets) : null;
      const mkNow = () => now(secrets);
      const fl = cpuPerMb(text, BIG_CHUNK, floor);
      const b = mkBase ? cpuPerMb(text, BIG_CHUNK, mkBase) : null;
      const n = cpuPerMb(text, BIG_CHUNK, mkNow);
      const bs = mkBase ? cpuPerMb(text, SMALL_CHUNK, mkBase) : null;
      const ns = cpuPerMb(text, SMALL_CHUNK, mkNow);
      const fmt = (ms: number) => `${ms.toFixed(1)} (${(1000 / ms).toFixed(0)})`;
      // The same bytes whatever the chunking and whichever redactor: the one-write output.
      const want = outputOf(text, text.length, mkNow);
      const outs = [outputOf(text, BIG_CHUNK, mkNow), outputOf(text, SMALL_CHUNK, mkNow)];
      if (mkBase) outs.push(outputOf(text, text.length, mkBase), outputOf(text, BIG_CHUNK, mkBase), outputOf(text, SMALL_CHUNK, mkBase));
      const same = outs.every((o) => o === want);
      ratios.push(ns / n);
      console.log(`| ${name} | ${label} | ${fmt(fl)} | ${b ? fmt(b) : '—'} | ${fmt(n)} | ${b ? `${(b / n).toFixed(1)}×` : '—'} | ${bs ? fmt(bs) : '—'} | ${fmt(ns)} | ${(ns / n).toFixed(2)}× | ${same ? 'yes' : 'NO'} |`);
    }
  }
  console.log(`now, ${small} ÷ ${big}: worst ${Math.max(...ratios).toFixed(2)}×, median ${pct(ratios, 50).toFixed(2)}×; load ${os.loadavg()[0]!.toFixed(2)}`);
}

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children: ProfileNode[];
}

/**
 * Bytes allocated per MB of `text` pushed in `size` chunks (ALLOC_MB in all, after one warm-up
 * pass), the share of pushes that left text held, and the functions that allocated most.
 */
async function allocPerMb(session: Session, text: string, size: number, make: () => StreamRedactor) {
  const chunks = chunksOf(text, size);
  const r = make();
  for (const c of chunks) Buffer.byteLength(r.push(c));
  let pushes = 0;
  let held = 0;
  let done = 0;
  await session.post('HeapProfiler.startSampling', { samplingInterval: ALLOC_SAMPLING_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  while (done < ALLOC_MB * 1024 * 1024) {
    for (const c of chunks) {
      // What a hop does next with the output: encode it (a joined string is flattened there).
      Buffer.byteLength(r.push(c));
      pushes++;
      if (r.pending > 0) held++;
      done += c.length;
    }
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const byFunction = new Map<string, number>();
  const walk = (n: ProfileNode) => {
    const file = n.callFrame.url.split('/').pop() || '(native)';
    const key = `${n.callFrame.functionName || '(anonymous)'} (${file})`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + n.selfSize);
    n.children.forEach(walk);
  };
  walk(profile.head as ProfileNode);
  const mb = done / (1024 * 1024);
  const total = [...byFunction.values()].reduce((a, b) => a + b, 0) / mb;
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 3).filter(([, b]) => b / mb >= 1024);
  return { kbPerMb: total / 1024, held: held / pushes, top: top.map(([f, b]) => `${f} ${(b / mb / 1024).toFixed(0)}`).join(', ') };
}

async function allocation(base: Base) {
  const session = new Session();
  session.connect();
  const now: MakeStream = (secrets) => createStreamRedactor(DEFAULT_RULES, secrets);
  const kinds = samples().filter(([name]) => /numbered|source|build log|repo/.test(name));
  console.log(`\nallocated per MB pushed (KB; V8 sampling heap profile, collected objects included), built-in rules, ${ALLOC_MB} MB per cell; load ${os.loadavg()[0]!.toFixed(2)}`);
  const start = base?.label ?? 'start';
  console.log(`| output | chunk | ${start} | now | pushes leaving text held (now) | now: most allocated by (KB/MB) |`);
  console.log('|---|---|---|---|---|---|');
  for (const size of [BIG_CHUNK, SMALL_CHUNK]) {
    for (const [name, text] of kinds) {
      const b = base ? await allocPerMb(session, text, size, () => base.make({})) : null;
      const n = await allocPerMb(session, text, size, () => now({}));
      console.log(`| ${name} | ${size / 1024} KB | ${b ? b.kbPerMb.toFixed(0) : '—'} | ${n.kbPerMb.toFixed(0)} | ${(n.held * 100).toFixed(0)}% | ${n.top || '—'} |`);
    }
  }
  session.disconnect();
}

async function main() {
  const { orgSecrets } = buildCorpus(10);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)}`);
  const base = await baseRedactor();
  if (process.env.BENCH_ONLY === 'alloc') return allocation(base);
  const none = typing({}, false);
  console.log(`typing, no redaction:            p50 ${us(none.p50)}  p99 ${us(none.p99)}`);
  for (const [label, secrets] of [['built-in rules', {}], ['+ 20 org secrets', orgSecrets]] as const) {
    const t = typing(secrets, true);
    console.log(`typing, ${label.padEnd(18)}       p50 ${us(t.p50)}  p99 ${us(t.p99)}  added p50 ${us(t.p50 - none.p50)}; keys whose echo waited for the next key: ${(t.held * 100).toFixed(1)}%`);
  }
  await bulk(orgSecrets, base);
  await allocation(base);
}

void main();

/**
 * What redaction adds (issue 10). Prints figures; asserts nothing about time.
 *   (a) ordinary typing: each key's echo is one chunk. Added latency per chunk (p50/p99) of the
 *       stream redactor vs no redaction, and the share of keys whose echo was held until the next
 *       key (a held echo waits for that key, however long it takes: no timer releases it).
 *       Measured with the built-in rules only, and with an org of 20 secrets.
 *   (b) CPU per MB on bulk output of several kinds (numbered lines, coloured build logs, source,
 *       JSON, CSV, coloured test output, base64, ls -l, this repo's own .ts files), each beside a
 *       floor (no redaction) and beside the redactor of another commit (BENCH_BASE) run in the same
 *       process, with whether both released the same bytes.
 * Usage: npm run bench:redaction (BENCH_MB, BENCH_CHUNK_KB, BENCH_REPEAT, BENCH_ROUNDS, BENCH_BASE)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCorpus, seeded } from '../common/redact/corpus';
import { OUTPUT_KINDS } from '../common/redact/output-kinds';
import { createStreamRedactor, DEFAULT_RULES, type SecretInput } from '../common/redact';

const TYPING_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const BULK_MB = Number(process.env.BENCH_MB ?? 8);
const BULK_CHUNK = Number(process.env.BENCH_CHUNK_KB ?? 64) * 1024;
const BULK_REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
/** Each kind of output is a sample this long, pushed again and again. */
const SAMPLE_CHARS = 1024 * 1024;
/** The commit this work (issue 17, the redactor's CPU per MB) started from: the default baseline. */
const BASE_COMMIT = 'e215165';

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
type MakeStream = (secrets: SecretInput) => StreamLike;

/** CPU ms per MB of pushing `text` in BULK_CHUNK chunks, BULK_MB in all (median of BULK_REPEAT), and everything released. */
function cpuPerMb(text: string, make: () => StreamLike): { ms: number; out: string } {
  const total = BULK_MB * 1024 * 1024;
  const times: number[] = [];
  let out = '';
  for (let rep = 0; rep < BULK_REPEAT; rep++) {
    const r = make();
    r.push(text.slice(0, BULK_CHUNK)); // warm up: the JIT, not the first call, is what a session sees
    const parts: string[] = [];
    // CPU time, not wall time: on a shared, loaded machine wall time measures the neighbours.
    const c0 = process.cpuUsage();
    let done = 0;
    while (done < total) {
      for (let at = 0; at < text.length && done < total; at += BULK_CHUNK) {
        const chunk = text.slice(at, at + BULK_CHUNK);
        const o = r.push(chunk);
        if (rep === 0 && done < text.length) parts.push(o);
        done += chunk.length;
      }
    }
    parts.push(r.end());
    const c = process.cpuUsage(c0);
    times.push((c.user + c.system) / 1000 / (done / (1024 * 1024)));
    if (rep === 0) out = parts.join('');
  }
  return { ms: pct(times, 50), out };
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

async function bulk(orgSecrets: SecretInput) {
  const base = await baseRedactor();
  const now: MakeStream = (secrets) => createStreamRedactor(DEFAULT_RULES, secrets);
  const floor = () => ({ push: (c: string) => (Buffer.from(c, 'utf8'), c), end: () => '' });
  console.log(`\nbulk output, ${BULK_MB} MB per row in ${BULK_CHUNK / 1024} KB chunks, CPU ms per MB (median of ${BULK_REPEAT}; MB/s in brackets); floor: UTF-8 encoding the chunk, no redaction`);
  console.log(`| output | secrets | floor | ${base?.label ?? 'start'} | now | now vs start | same output |`);
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, text] of samples()) {
    for (const [label, secrets] of [['built-in', {}], ['+20 org', orgSecrets]] as const) {
      const fl = cpuPerMb(text, floor);
      const b = base ? cpuPerMb(text, () => base.make(secrets)) : null;
      const n = cpuPerMb(text, () => now(secrets));
      const fmt = (ms: number) => `${ms.toFixed(1)} (${(1000 / ms).toFixed(0)})`;
      console.log(`| ${name} | ${label} | ${fmt(fl.ms)} | ${b ? fmt(b.ms) : '—'} | ${fmt(n.ms)} | ${b ? `${(b.ms / n.ms).toFixed(1)}×` : '—'} | ${b ? (b.out === n.out ? 'yes' : 'NO') : '—'} |`);
    }
  }
}

async function main() {
  const { orgSecrets } = buildCorpus(10);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)}`);
  const none = typing({}, false);
  console.log(`typing, no redaction:            p50 ${us(none.p50)}  p99 ${us(none.p99)}`);
  for (const [label, secrets] of [['built-in rules', {}], ['+ 20 org secrets', orgSecrets]] as const) {
    const t = typing(secrets, true);
    console.log(`typing, ${label.padEnd(18)}       p50 ${us(t.p50)}  p99 ${us(t.p99)}  added p50 ${us(t.p50 - none.p50)}; keys whose echo waited for the next key: ${(t.held * 100).toFixed(1)}%`);
  }
  await bulk(orgSecrets);
}

void main();

/**
 * What redaction adds (issue 10). Prints figures; asserts nothing about time.
 *   (a) ordinary typing: each key's echo is one chunk. Added latency per chunk (p50/p99) of the
 *       stream redactor vs no redaction, and the share of keys whose echo was held until the next
 *       key (a held echo waits for that key, however long it takes: no timer releases it).
 *       Measured with the built-in rules only, and with an org of 20 secrets.
 *   (b) throughput on bulk output (build logs with coloured lines, 64 KB chunks) in MB/s.
 * Usage: node --import tsx bench/redaction.ts
 */
import os from 'node:os';
import { buildCorpus } from '../common/redact/corpus';
import { createStreamRedactor, DEFAULT_RULES, type SecretInput } from '../common/redact';

const TYPING_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const BULK_MB = Number(process.env.BENCH_MB ?? 32);
const BULK_CHUNK = 64 * 1024;

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

function bulk(secrets: SecretInput): number {
  const line = (k: number) =>
    k % 3 === 0
      ? `\x1b[2m12:00:${String(k % 60).padStart(2, '0')}\x1b[0m \x1b[32mINFO\x1b[0m compiled module_${k}.ts in ${k % 97} ms (hash ${((k * 2654435761) >>> 0).toString(16)})\r\n`
      : `  at Object.<anonymous> (/home/dev/app/src/handlers/user_${k}.js:${k % 400}:17) key=value_${k} path=/var/lib/app/${k}\r\n`;
  let text = '';
  for (let k = 0; text.length < BULK_CHUNK * 16; k++) text += line(k);
  const r = createStreamRedactor(DEFAULT_RULES, secrets);
  const total = BULK_MB * 1024 * 1024;
  r.push(text.slice(0, BULK_CHUNK)); // warm up: the JIT, not the first call, is what a session sees
  // CPU time, not wall time: on a shared, loaded machine wall time measures the neighbours.
  const c0 = process.cpuUsage();
  let done = 0;
  while (done < total) {
    for (let at = 0; at < text.length && done < total; at += BULK_CHUNK) {
      const chunk = text.slice(at, at + BULK_CHUNK);
      r.push(chunk);
      done += chunk.length;
    }
  }
  r.end();
  const c = process.cpuUsage(c0);
  return done / (1024 * 1024) / ((c.user + c.system) / 1e6);
}

function main() {
  const { orgSecrets } = buildCorpus(10);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load ${os.loadavg()[0]!.toFixed(2)}`);
  const none = typing({}, false);
  console.log(`typing, no redaction:            p50 ${us(none.p50)}  p99 ${us(none.p99)}`);
  for (const [label, secrets] of [['built-in rules', {}], ['+ 20 org secrets', orgSecrets]] as const) {
    const t = typing(secrets, true);
    console.log(`typing, ${label.padEnd(18)}       p50 ${us(t.p50)}  p99 ${us(t.p99)}  added p50 ${us(t.p50 - none.p50)}; keys whose echo waited for the next key: ${(t.held * 100).toFixed(1)}%`);
  }
  for (const [label, secrets] of [['built-in rules', {}], ['+ 20 org secrets', orgSecrets]] as const) {
    console.log(`throughput, ${label.padEnd(18)}   ${bulk(secrets).toFixed(1)} MB/s of CPU time (${BULK_MB} MB in ${BULK_CHUNK / 1024} KB chunks)`);
  }
}

main();

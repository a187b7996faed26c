/**
 * Why `grep -rl | xargs sed -i` — bench:dta's baseline — took 0.35 s or 2.4 s on the same tree: the
 * same sed on the same generated site under three disk states, alternately, each on a fresh tree
 * (disk-state.ts explains both habits of this machine's ext4):
 *   fresh     — the tree written seconds before, nothing removed near it;
 *   after-rm  — the same, but 20,000 files made in the tree's folders just before it were removed
 *               a second before sed (a bench's previous round, another engineer's test): every file
 *               sed makes scans past those freed inodes;
 *   synced    — the tree flushed to disk first (`sync`), as a repository's old files are: each
 *               rename over a file frees blocks, and the device's discard is waited for.
 * Prints wall and CPU (user, system) per run with the load. Asserts nothing.
 * Usage: npm run bench:dta-disk   (BENCH_FILES, default 5000; BENCH_ROUNDS, default 2)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchSite } from '../runner/dta/testing/bench-site';
import { writeFiles } from '../runner/dta/testing/fixture-repos';
import { cpuNow, cpuSince, diskFacts } from './disk-state';

const FILES = Number(process.env.BENCH_FILES ?? 5000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
const SED = "grep -rl old.example.com . | xargs sed -i -e 's#http://old.example.com#https://new.example.com#g' -e 's#https://old.example.com#https://new.example.com#g'";
/** ext4 counts a removal as recent only from the next clock second on. */
const NEXT_SECOND_MS = 1100;
/** Files removed per file of the site in the after-rm state (20,000 for the default site). */
const REMOVED_PER_FILE = 4;

type State = 'fresh' | 'after-rm' | 'synced';

/** Every tree stays until the end: removing one would put the next state in the after-rm state. */
const parents: string[] = [];

async function once(state: State, round: number): Promise<string> {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dta-disk-'));
  parents.push(parent);
  const tree = path.join(parent, 'site');
  const site = benchSite(FILES, round);
  // Made first, in the folders the site's files go to: their inodes are the ones sed's new files meet.
  const removed = state === 'after-rm' ? Object.keys(site).flatMap((rel) => Array.from({ length: REMOVED_PER_FILE }, (_, k) => `${rel}.removed${k}`)) : [];
  writeFiles(tree, Object.fromEntries(removed.map((rel) => [rel, 'x'])));
  writeFiles(tree, site);
  if (state === 'synced') execFileSync('sync');
  if (state === 'after-rm') {
    for (const rel of removed) fs.rmSync(path.join(tree, rel));
    await new Promise((resolve) => setTimeout(resolve, NEXT_SECOND_MS));
  }
  const c = cpuNow();
  const t = performance.now();
  execFileSync('sh', ['-c', SED], { cwd: tree });
  const ms = performance.now() - t;
  const cpu = cpuSince(c);
  return `${state.padEnd(8)} sed ${ms.toFixed(0).padStart(6)} ms wall, CPU user ${(cpu.user * 1000).toFixed(0).padStart(4)} ms, sys ${(cpu.sys * 1000).toFixed(0).padStart(5)} ms   (load ${os.loadavg()[0]!.toFixed(2)})`;
}

async function main() {
  console.log(`${FILES} files, ${ROUNDS} round(s), ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; disk: ${diskFacts(os.tmpdir())}`);
  const states: State[] = ['fresh', 'after-rm', 'synced'];
  try {
    for (let r = 0; r < ROUNDS; r++) {
      // Rotated each round: no state always follows the same one.
      for (let k = 0; k < states.length; k++) console.log(`round ${r + 1} ${await once(states[(k + r) % states.length]!, r)}`);
    }
  } finally {
    for (const p of parents) fs.rmSync(p, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

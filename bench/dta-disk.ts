/**
 * Why `grep -rl | xargs sed -i` — bench:dta's baseline — took 0.35 s or 2.4 s on the same tree: the
 * same sed on the same generated site under three disk states, alternately, each on a fresh tree
 * (disk-state.ts explains both habits of this machine's ext4):
 *   fresh     — the tree written seconds before, nothing removed near it;
 *   after-rm  — the same, but 5,000 files made before the tree, in the same folder, were removed
 *               just before sed (a bench's previous round, another engineer's test): every file sed
 *               makes scans past those freed inodes;
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

type State = 'fresh' | 'after-rm' | 'synced';

async function once(state: State, round: number): Promise<string> {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dta-disk-'));
  try {
    const victims = path.join(parent, 'removed');
    if (state === 'after-rm') {
      fs.mkdirSync(victims);
      for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(victims, String(i)), 'x');
    }
    const tree = path.join(parent, 'site');
    writeFiles(tree, benchSite(FILES, round));
    if (state === 'synced') execFileSync('sync');
    if (state === 'after-rm') {
      fs.rmSync(victims, { recursive: true });
      await new Promise((resolve) => setTimeout(resolve, NEXT_SECOND_MS));
    }
    const c = cpuNow();
    const t = performance.now();
    execFileSync('sh', ['-c', SED], { cwd: tree });
    const ms = performance.now() - t;
    const cpu = cpuSince(c);
    return `${state.padEnd(8)} sed ${ms.toFixed(0).padStart(6)} ms wall, CPU user ${(cpu.user * 1000).toFixed(0).padStart(4)} ms, sys ${(cpu.sys * 1000).toFixed(0).padStart(5)} ms   (load ${os.loadavg()[0]!.toFixed(2)})`;
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
}

async function main() {
  console.log(`${FILES} files, ${ROUNDS} round(s), ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}; disk: ${diskFacts(os.tmpdir())}`);
  const states: State[] = ['fresh', 'after-rm', 'synced'];
  for (let r = 0; r < ROUNDS; r++) {
    // Rotated each round: no state always follows the same one.
    for (let k = 0; k < states.length; k++) console.log(`round ${r + 1} ${await once(states[(k + r) % states.length]!, r)}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

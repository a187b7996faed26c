/**
 * Two parts of a link_updater run on bench:dta's generated site, each beside its baseline in the
 * same invocation, alternately, on fresh trees: on a machine shared with other engineers' builds the
 * whole run's wall time says more about the neighbours than about either part; these say what the
 * part costs (wall and CPU: this process and its finished children, git and sync).
 *   (a) HEAD's blobs for the verifier: all through `git cat-file --batch` (baseline) against
 *       readBlobs (the work tree where a file's git blob id is HEAD's, git for the rest);
 *   (b) the approved apply: writing a temp per file (baseline) against renaming what the dry-run
 *       staged (staged-contents.ts), whose own cost is printed apart (it runs while the dry-run
 *       waits for its verifier).
 * Usage: npm run bench:dta-parts   (BENCH_FILES, default 5000; BENCH_ROUNDS, default 3)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyAtomic } from '../runner/dta/atomic-apply';
import { catBlobs, readBlobs, treeAt } from '../runner/dta/git-state';
import { stageContents } from '../runner/dta/staged-contents';
import { benchSite } from '../runner/dta/testing/bench-site';
import { gitIn, makeRepo } from '../runner/dta/testing/fixture-repos';
import { cpuNow, cpuSince } from './disk-state';

const FILES = Number(process.env.BENCH_FILES ?? 5000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

async function timed<T>(work: () => Promise<T> | T): Promise<{ ms: number; cpu: number; value: T }> {
  const c = cpuNow();
  const t = performance.now();
  const value = await work();
  const used = cpuSince(c);
  return { ms: performance.now() - t, cpu: (used.user + used.sys) * 1000, value };
}

const load = () => os.loadavg()[0]!.toFixed(1);
const fmt = (r: { ms: number; cpu: number }) => `${r.ms.toFixed(0).padStart(5)} ms wall, ${r.cpu.toFixed(0).padStart(4)} ms CPU`;

/** The same rewrite link_updater proposes on this site (every old host to the new one). */
function rewritten(files: Record<string, string>): Map<string, string> {
  return new Map(Object.entries(files).map(([rel, text]) => [rel, text.replaceAll('http://old.example.com', 'https://new.example.com').replaceAll('https://old.example.com', 'https://new.example.com')]));
}

async function main() {
  console.log(`${FILES} files, ${ROUNDS} round(s), ${os.cpus().length} CPUs, load ${load()}`);
  for (let round = 0; round < ROUNDS; round++) {
    const files = benchSite(FILES, round);
    const changes = rewritten(files);
    const dirs = [makeRepo(files, 'bench-dta-parts'), makeRepo(files, 'bench-dta-parts')];
    try {
      const [a, b] = dirs as [string, string];
      const tree = await treeAt(a, 'HEAD');
      const paths = tree.paths;
      const git = await timed(() => catBlobs(a, paths.map((p) => tree.blobs.get(p)!)));
      const work = await timed(() => readBlobs(a, 'HEAD', paths, tree));
      if (git.value.join('') !== [...work.value.values()].join('')) throw new Error('readBlobs differs from git cat-file');
      console.log(`round ${round + 1} HEAD blobs: git cat-file ${fmt(git)} | work tree + blob id ${fmt(work)}   (load ${load()})`);

      const journal = (dir: string) => path.join(gitIn(dir, 'rev-parse', '--absolute-git-dir').trim(), 'agent-village-dta');
      const withTemps = async () => {
        return timed(async () => (await applyAtomic(a, path.join(journal(a), 'journal'), `temps${round}`, changes)).releaseOriginals());
      };
      const withStaged = async () => {
        const staging = await timed(async () => {
          const s = stageContents(b, journal(b), `run${round}`, changes);
          await s?.done;
          return s;
        });
        const r = await timed(async () => (await applyAtomic(b, path.join(journal(b), 'journal'), `staged${round}`, changes, { staged: staging.value })).releaseOriginals());
        return { staging, staged: r };
      };
      // Alternately first: the disk's state after one apply must not favour the other.
      let temps: Awaited<ReturnType<typeof withTemps>>;
      let staging: Awaited<ReturnType<typeof withStaged>>['staging'];
      let staged: Awaited<ReturnType<typeof withStaged>>['staged'];
      if (round % 2 === 0) {
        temps = await withTemps();
        ({ staging, staged } = await withStaged());
      } else {
        ({ staging, staged } = await withStaged());
        temps = await withTemps();
      }
      if (gitIn(a, 'diff', '--stat') !== gitIn(b, 'diff', '--stat')) throw new Error('the two applies differ');
      console.log(`round ${round + 1} apply:      temps written ${fmt(temps)} | staged renamed ${fmt(staged)} (staging beforehand ${fmt(staging)})   (load ${load()})`);
    } finally {
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

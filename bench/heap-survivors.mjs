/**
 * Preloaded with `--import` by bench/control-plane-flood.ts (BENCH_SURVIVORS=DIR): the control
 * plane's main thread samples, between two SIGUSR2s (around the measured rounds), what it
 * allocates and what of that **outlived a scavenge**: objects a scavenge collected are left out,
 * so the profile holds what was promoted to the old generation (collected by a mark-compact
 * later, or still alive at the end), by allocating function. That is the garbage that costs the
 * collector's helper threads (marking, compaction) and makes scavenges copy, which the
 * allocation profile of bench/live-heap.mjs (everything allocated) cannot tell from young garbage.
 * Written into AGENT_VILLAGE_SURVIVORS_DIR as a V8 .heapprofile (Chrome DevTools, Memory tab, or
 * `node bench/heap-survivors.mjs FILE` for the top allocation sites in text).
 */
import { Session } from 'node:inspector';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

/** Bytes between samples: V8's default is 32 KB; 8 KB still costs little and sees the small objects. */
const SAMPLING_INTERVAL = 8 * 1024;
const TOP = 25;
const dir = process.env.AGENT_VILLAGE_SURVIVORS_DIR;
const isRunner = process.argv.some((a) => a.includes('runner'));

if (process.argv[1]?.endsWith('heap-survivors.mjs') && process.argv[2]) report(process.argv[2]);
else if (dir && isMainThread && !isRunner) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.startSampling', {
        samplingInterval: SAMPLING_INTERVAL,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: false,
      });
      return;
    }
    sampling = false;
    session.post('HeapProfiler.stopSampling', (err, res) => {
      if (err) console.error('[bench] heap sampling failed', err);
      else writeFileSync(join(dir, `survivors-${process.pid}-${Date.now()}.heapprofile`), JSON.stringify(res.profile));
    });
  });
}

/** The allocation sites (function, file:line, and the two callers above) holding the most sampled bytes. */
function report(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const bytes = new Map();
  let total = 0;
  const frame = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const walk = (node, path) => {
    const here = [...path, frame(node)];
    const self = node.selfSize ?? 0;
    if (self) {
      const key = here.slice(-3).reverse().join(' ← ');
      bytes.set(key, (bytes.get(key) ?? 0) + self);
      total += self;
    }
    for (const c of node.children ?? []) walk(c, here);
  };
  walk(profile.head, []);
  console.log(`sampled bytes that outlived a scavenge: ${(total / 1048576).toFixed(1)} MB`);
  for (const [k, v] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${(v / 1048576).toFixed(2).padStart(8)} MB ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
}

/**
 * Preloaded with `--import` by bench/terminal-live.ts (BENCH_HEAP_PROF=DIR): the control plane's
 * main thread samples what it allocates between two SIGUSR2s (the bench sends one before the
 * product's throughput run and one after it), collected objects included, and writes a V8
 * .heapprofile (open in Chrome DevTools, Memory tab) into AGENT_VILLAGE_HEAP_PROF_DIR: what the
 * garbage collector had to clean up per MB of output, by allocating function.
 * AGENT_VILLAGE_HEAP_PROF_SURVIVORS=1 leaves out what scavenges collected (bench/heap-survivors.mjs).
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

/** Bytes between samples: V8's default is 32 KB; 8 KB still costs little and sees the small objects. */
const SAMPLING_INTERVAL = 8 * 1024;
const dir = process.env.AGENT_VILLAGE_HEAP_PROF_DIR;
const isRunner = process.argv.some((a) => a.includes('runner'));

if (dir && isMainThread && !isRunner) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.startSampling', {
        samplingInterval: SAMPLING_INTERVAL,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: process.env.AGENT_VILLAGE_HEAP_PROF_SURVIVORS !== '1',
      });
      return;
    }
    sampling = false;
    session.post('HeapProfiler.stopSampling', (err, res) => {
      if (err) console.error('[bench] heap sampling failed', err);
      else writeFileSync(join(dir, `server-${process.pid}-${Date.now()}.heapprofile`), JSON.stringify(res.profile));
    });
  });
}

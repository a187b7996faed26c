/**
 * Preloaded with `--import` (NODE_OPTIONS may not carry --cpu-prof): profiles this process from
 * start to exit and writes a V8 .cpuprofile into AGENT_VILLAGE_CPU_PROF_DIR. Used by
 * bench/terminal-live.ts BENCH_CPU_PROF=DIR for the control plane.
 */
import { Session } from 'node:inspector';
import { isMainThread, threadId } from 'node:worker_threads';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.AGENT_VILLAGE_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // On the main thread the inspector answers synchronously, so this runs before the exit.
    session.post('Profiler.stop', (err, res) => {
      // NODE_OPTIONS preloads this in worker threads too (the ingest writer's, the mirror's): each
      // writes its own file, or the last thread to end would overwrite the main thread's profile.
      if (!err) writeFileSync(join(dir, `server-${process.pid}${isMainThread ? '' : `-thread${threadId}`}.cpuprofile`), JSON.stringify(res.profile));
    });
  };
  process.on('exit', write);
  // At the stop signal, before a shutdown that may not reach exit in time (the server has its own
  // SIGTERM handler, so listening here changes nothing about how it stops).
  process.on('SIGTERM', write);
}

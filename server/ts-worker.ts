import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running a TypeScript module under any host (tsx, vitest): one JavaScript entry,
 * ts-worker-boot.mjs, registers tsx and imports `entry`. The parent's execArgv is not passed on.
 */
export function startTsWorker(entry: URL, options: Omit<WorkerOptions, 'argv' | 'execArgv'> = {}): Worker {
  return new Worker(new URL('./ts-worker-boot.mjs', import.meta.url), { ...options, argv: [entry.href], execArgv: [] });
}

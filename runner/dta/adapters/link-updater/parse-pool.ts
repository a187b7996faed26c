import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { currentReaders, parseLinks, type FoundLink } from './parsers';
import type { ParseReply, ParseRequest } from './parse-worker';

/**
 * Parsing spread over the cores: the parsers are pure CPU (parse5, micromark, postcss), and a
 * 5,000-file site kept one core busy while the other idled. The calling thread parses batches too
 * (it would only wait otherwise, and it works while the threads are still starting), beside one
 * worker thread per further core. Results come back in input order, so a run stays deterministic
 * however the batches were shared out.
 */

/** Below this many files, starting the threads (~0.3 s each with the TypeScript loader) costs more than it saves. */
export const POOL_MIN_FILES = 300;
/** Files per message: few round trips, yet small enough that every thread is busy until the end. */
export const POOL_BATCH_FILES = 100;
/** A runner between runs keeps no parser threads: an idle pool is stopped after this long. */
export const POOL_IDLE_MS = 30_000;

/** Set (to true) only in the verifier's prebuilt bundle (verifier/bundle.ts). */
declare const __AV_DTA_BUNDLE__: boolean | undefined;
/**
 * The thread's entry: inside the verifier's bundle, the bundled worker beside it; from the sources,
 * a JavaScript entry that loads tsx, then the TypeScript worker (so it runs under any host: tsx, vitest).
 */
const WORKER = typeof __AV_DTA_BUNDLE__ !== 'undefined' && __AV_DTA_BUNDLE__ ? new URL('./parse-worker.mjs', import.meta.url) : new URL('./parse-worker-boot.mjs', import.meta.url);

/** Overrides the number of parser threads (0: parse in the calling thread only), e.g. on a shared machine. */
export const PARSE_THREADS_ENV = 'AV_DTA_PARSE_THREADS';

/**
 * Processes that parse the same files at the same time: a run's measure in the runner and its
 * verifier's prepare (HEAD's files, in its own process) run side by side, each with a pool of its
 * own, so each may count on its share of the idle cores only.
 */
export const PARSING_PROCESSES = 2;

/**
 * Worker threads beside the calling thread: the override if set; else this process's share of the
 * idle cores (cores minus the 1-minute load, over PARSING_PROCESSES) less the calling thread —
 * none on 2 cores. A thread that shares a core with the verifier only adds its start and a cold
 * parse (its own JIT warm-up): measured on this 2-core machine, bench:dta with one thread forced in
 * each process cost about 1 s more CPU per round and no wall time (README, link_updater's parse).
 */
export function poolSize(): number {
  const set = Number.parseInt(process.env[PARSE_THREADS_ENV] ?? '', 10);
  if (Number.isInteger(set) && set >= 0) return set;
  const idleCores = os.availableParallelism() - os.loadavg()[0]!;
  return Math.max(0, Math.floor(idleCores / PARSING_PROCESSES) - 1);
}

interface Thread {
  worker: Worker;
  /** true once the thread has loaded its parsers (a batch is never queued behind its start), false if it died first. */
  started: Promise<boolean>;
  pending: Map<number, { resolve: (links: FoundLink[][]) => void; reject: (err: Error) => void }>;
}

let threads: Thread[] = [];
let nextId = 1;
let idle: NodeJS.Timeout | null = null;

function startThread(): Thread {
  let markStarted: (ok: boolean) => void = () => {};
  const t: Thread = { worker: new Worker(WORKER, { execArgv: [] }), started: new Promise((r) => (markStarted = r)), pending: new Map() };
  const failAll = (err: Error) => {
    markStarted(false);
    for (const p of t.pending.values()) p.reject(err);
    t.pending.clear();
    threads = threads.filter((x) => x !== t);
  };
  t.worker.on('message', (reply: ParseReply) => {
    if ('ready' in reply) return markStarted(true);
    const p = t.pending.get(reply.id);
    if (!p) return;
    t.pending.delete(reply.id);
    if (t.pending.size === 0) t.worker.unref();
    if ('error' in reply) p.reject(new Error(`a parser thread failed: ${reply.error}`));
    else p.resolve(reply.links);
  });
  t.worker.on('error', failAll);
  t.worker.on('exit', (code) => failAll(new Error(`a parser thread exited (${code})`)));
  // An idle pool never keeps a process (the verifier, a CLI) alive; a thread with work out is
  // ref'd (send) so the process waits for its answer. After the listeners: adding a 'message'
  // listener refs the worker again.
  t.worker.unref();
  return t;
}

function send(t: Thread, files: Array<[string, string]>): Promise<FoundLink[][]> {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    t.pending.set(id, { resolve, reject });
    t.worker.ref();
    t.worker.postMessage({ id, files, readers: currentReaders() } satisfies ParseRequest);
  });
}

/** Stops every thread (the idle timer does this; tests and shutdown may call it directly). */
export async function stopParsePool(): Promise<void> {
  if (idle) clearTimeout(idle);
  idle = null;
  const old = threads;
  threads = [];
  await Promise.all(old.map((t) => t.worker.terminate()));
}

/**
 * Every file's links, in input order: the calling thread and `size` worker threads take batches
 * until none are left. Rejects if a thread fails.
 */
export async function parseInWorkers(files: Array<[string, string]>, size = poolSize()): Promise<FoundLink[][]> {
  if (idle) clearTimeout(idle);
  while (threads.length < size) threads.push(startThread());
  const out: FoundLink[][] = new Array<FoundLink[]>(files.length);
  let next = 0;
  const take = () => {
    const from = next;
    next += POOL_BATCH_FILES;
    return { from, batch: files.slice(from, from + POOL_BATCH_FILES) };
  };
  const keep = (from: number, links: FoundLink[][]) => {
    for (let i = 0; i < links.length; i++) out[from + i] = links[i];
  };
  const here = async () => {
    while (next < files.length) {
      const { from, batch } = take();
      keep(from, batch.map(([rel, text]) => parseLinks(rel, text)));
      // Let the threads' answers in (and hand them their next batch) between our own batches.
      await new Promise((r) => setImmediate(r));
    }
  };
  try {
    const mine = here();
    await Promise.all([
      mine,
      ...threads.slice(0, size).map(async (t) => {
        // A thread still starting when the calling thread has taken the last batch never helps;
        // one that died while starting neither: the calling thread finishes alone.
        if (!(await Promise.race([t.started, mine.then(() => false)]))) return;
        while (next < files.length) {
          const { from, batch } = take();
          keep(from, await send(t, batch));
        }
      }),
    ]);
  } finally {
    idle = setTimeout(() => void stopParsePool(), POOL_IDLE_MS);
    idle.unref();
  }
  return out;
}

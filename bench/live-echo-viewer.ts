/**
 * The measured viewer of bench:live's echo runs, on a thread of its own (bench/live-echo.ts,
 * measuredViewer). The bench's main thread reads every other viewer's socket — the floods' tens
 * of frames a second, decoded and acked as their pages do — and a key's echo that reached this
 * process waited for that loop before it was timed (the bench's own loop delay, p99 9–15 ms beside
 * two floods): a person's tab showing the terminal they type into does not share its loop with
 * other people's floods. The baselines' measured clients (one-hop, wetty) run here too, the same way.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { uiSocket } from '../server/integration/harness';
import { avViewer, baselineClient, echoTimes, lastEchoRun, type MeasuredViewerOptions, type MeasuredViewerRequest } from './live-echo';

const opts = workerData as MeasuredViewerOptions;
const port = parentPort!;

const client =
  opts.kind !== 'av'
    ? await (async () => {
        const h = baselineClient(opts);
        await h.ready;
        return { ...h, attach: async () => undefined, close: () => void h.socket.close() };
      })()
    : await (async () => {
        const socket = await uiSocket(opts.url, opts.cookie);
        return { ...avViewer(socket, opts.sessionId), close: () => void socket.close() };
      })();

port.on('message', (m: MeasuredViewerRequest) => {
  const answer = (work: Promise<unknown>) =>
    work.then(
      (value) => port.postMessage({ ok: true, value }),
      (err: unknown) => port.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  if (m.kind === 'attach') void answer(client.attach());
  else if (m.kind === 'keys') void answer(echoTimes(m.keys, client.send, client.output).then(() => lastEchoRun()));
  else {
    client.close();
    port.close();
  }
});
port.postMessage({ ok: true, value: 'ready' });

import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { startTsWorker } from '../../ts-worker';
import type { MirrorReply } from './mirror-messages';

/** The real mirror thread, spoken to raw (as mirror-thread.ts does, but free to send anything). */
function thread() {
  const worker = startTsWorker(new URL('./mirror-worker.ts', import.meta.url));
  const replies = new Map<number, MirrorReply>();
  const waiting = new Map<number, (r: MirrorReply) => void>();
  worker.on('message', (r: MirrorReply) => {
    replies.set(r.req, r);
    waiting.get(r.req)?.(r);
  });
  const reply = (req: number) => (replies.has(req) ? Promise.resolve(replies.get(req)!) : new Promise<MirrorReply>((res) => waiting.set(req, res)));
  return { worker, reply };
}

let running: Worker | null = null;
afterEach(async () => {
  await running?.terminate();
  running = null;
});

describe('the mirror thread at its boundary', () => {
  it('refuses malformed requests with a clear error, answers a bad read with it, and goes on with the rest of the batch', async () => {
    const { worker, reply } = thread();
    running = worker;
    worker.postMessage([
      { kind: 'open', id: 1, cols: 40, rows: 5, scrollback: 10 },
      { kind: 'write', id: 1, text: 42 },
      { kind: 'read', id: 1, req: 7, scrollback: -1 },
      { kind: 'explode', id: 1 },
      { kind: 'write', id: 1, text: 'still here' },
      { kind: 'read', id: 1, req: 8, scrollback: 0 },
    ]);
    const bad = await reply(7);
    expect('error' in bad && bad.error).toMatch(/refused: scrollback/);
    const good = await reply(8);
    expect('data' in good && good.data).toBe('still here');
    // Not even a batch: refused, and the thread is still up.
    worker.postMessage('not a batch');
    worker.postMessage(null);
    worker.postMessage([{ kind: 'write', id: 1, text: ', yes' }, { kind: 'read', id: 1, req: 9, scrollback: 0 }]);
    const after = await reply(9);
    expect('data' in after && after.data).toBe('still here, yes');
  });

  it('answers a read of a terminal it does not have with an error, not silence', async () => {
    const { worker, reply } = thread();
    running = worker;
    worker.postMessage([{ kind: 'read', id: 99, req: 1, scrollback: 0 }]);
    const r = await reply(1);
    expect('error' in r && r.error).toMatch(/no mirror 99/);
  });
});

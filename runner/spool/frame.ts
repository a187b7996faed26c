import { RUNNER_FRAME_VERSION, type RunnerEvent, type RunnerFrame, type RunnerFrameHeader } from '../../protocol';

/**
 * A batch as a binary frame (protocol/runner-frame.ts): each TERMINAL_CHUNK's text goes as raw
 * UTF-8 into one buffer, socket.io sends that as a binary websocket message, and only the small
 * per-event fields are JSON. Escaping `\r\n` and quotes in JSON was most of what sending output
 * cost (issue 17).
 */
export function encodeRunnerFrame(batch: readonly RunnerEvent[]): RunnerFrame {
  const events: RunnerFrameHeader[] = new Array(batch.length);
  const lengths: number[] = new Array(batch.length);
  let total = 0;
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i];
    // Half a surrogate pair has no UTF-8 form: such a chunk keeps its string, carried whole.
    if (e.type === 'TERMINAL_CHUNK' && isWellFormed(e.data)) {
      const n = Buffer.byteLength(e.data, 'utf8');
      const { data: _data, ...head } = e;
      events[i] = { ...head, bytes: n };
      lengths[i] = n;
      total += n;
    } else {
      events[i] = e;
      lengths[i] = -1;
    }
  }
  const data = Buffer.allocUnsafe(total);
  let offset = 0;
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i];
    if (lengths[i] < 0 || e.type !== 'TERMINAL_CHUNK') continue;
    offset += data.write(e.data, offset, 'utf8');
  }
  return { v: RUNNER_FRAME_VERSION, events, data };
}

/** String.prototype.isWellFormed (Node 20; not yet in the ES2023 lib the tree compiles with). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

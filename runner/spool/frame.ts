import { RUNNER_FRAME_VERSION, type RunnerEvent, type RunnerFrame, type RunnerFrameHeader } from '../../protocol';
import { chunkHead, isWellFormed } from './spool-file';

/** A chunk's UTF-8 as the spool keeps it (a Buffer over its own ArrayBuffer). */
export type FrameBytes = RunnerFrame['data'];

/**
 * A batch as a binary frame (protocol/runner-frame.ts): each TERMINAL_CHUNK's text goes as raw
 * UTF-8 into one buffer, socket.io sends that as a binary websocket message, and only the small
 * per-event fields are JSON. Escaping `\r\n` and quotes in JSON was most of what sending output
 * cost (issue 17).
 */
export function encodeRunnerFrame(batch: readonly RunnerEvent[], utf8: ReadonlyArray<FrameBytes | undefined> = []): RunnerFrame {
  const events: RunnerFrameHeader[] = new Array(batch.length);
  const lengths: number[] = new Array(batch.length);
  let total = 0;
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i];
    const spooled = utf8[i];
    // Half a surrogate pair has no UTF-8 form: such a chunk keeps its string, carried whole.
    if (e.type === 'TERMINAL_CHUNK' && (spooled || isWellFormed(e.data))) {
      const n = spooled ? spooled.byteLength : Buffer.byteLength(e.data, 'utf8');
      events[i] = chunkHead(e, n);
      lengths[i] = n;
      total += n;
    } else {
      events[i] = e;
      lengths[i] = -1;
    }
  }
  const only = soleText(lengths, utf8);
  // One chunk (a flood under flow control sends one a batch): its spooled bytes are the frame's,
  // not copied into a buffer of their own (every buffer allocated outside V8's heap counts
  // towards its next full collection).
  if (only) return frameOf(events, only);
  const data = Buffer.allocUnsafe(total);
  let offset = 0;
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i];
    if (lengths[i] < 0 || e.type !== 'TERMINAL_CHUNK') continue;
    // The spool's bytes when it has them: the text is encoded to UTF-8 once, for both.
    const spooled = utf8[i];
    if (spooled) {
      data.set(spooled, offset);
      offset += spooled.byteLength;
    } else {
      offset += data.write(e.data, offset, 'utf8');
    }
  }
  return frameOf(events, data);
}

/**
 * `data` first: socket.io's encoder looks for binary in the packet key by key, depth first, and
 * stops at the first it finds; behind `events` it walked every event's fields first (issue 17).
 */
function frameOf(events: RunnerFrameHeader[], data: FrameBytes): RunnerFrame {
  return { data, v: RUNNER_FRAME_VERSION, events };
}


/** The spooled bytes of the batch's only binary chunk, if there is exactly one and the spool has them. */
function soleText(lengths: readonly number[], utf8: ReadonlyArray<FrameBytes | undefined>): FrameBytes | null {
  let at = -1;
  for (let i = 0; i < lengths.length; i++) {
    if (lengths[i] < 0) continue;
    if (at >= 0) return null;
    at = i;
  }
  return at >= 0 ? (utf8[at] ?? null) : null;
}

import { z } from 'zod';
import { RunnerEventSchema } from './events';
import { FRAME_LIMITS } from './wire-limits';

/**
 * The runner's event batch as a binary frame (issue 17): terminal output travels as raw UTF-8 in
 * one socket.io binary attachment instead of JSON-escaped strings, so neither the runner nor the
 * control plane escapes, parses or copies `\r\n`-heavy text through JSON.
 *
 * `events` are the batch's events in order. A TERMINAL_CHUNK carries `bytes` (its data's UTF-8
 * length) instead of `data`; its text is the next `bytes` of `data`. Every other event (and a
 * chunk the sender could not encode exactly, e.g. one ending in half a surrogate pair) is carried
 * whole, as in a JSON batch. Decoded, a frame is the same RunnerEvent[] a JSON batch is.
 */
export const RUNNER_FRAME_VERSION = 1;

const FrameHeaderSchema = z.looseObject({
  type: z.string().max(100),
  bytes: z.number().int().min(0).max(FRAME_LIMITS.DATA_BYTES).optional(),
});

export const RunnerFrameSchema = z.object({
  v: z.literal(RUNNER_FRAME_VERSION),
  events: z.array(FrameHeaderSchema).min(1).max(FRAME_LIMITS.EVENTS),
  // socket.io hands a binary attachment to the server as a Buffer (a Uint8Array).
  data: z
    .instanceof(Uint8Array, { message: 'must be binary (a socket.io attachment)' })
    .refine((d) => d.byteLength <= FRAME_LIMITS.DATA_BYTES, { message: `must be at most ${FRAME_LIMITS.DATA_BYTES} bytes` }),
});
export type RunnerFrame = z.infer<typeof RunnerFrameSchema>;
export type RunnerFrameHeader = z.infer<typeof FrameHeaderSchema>;

// fatal: a chunk whose bytes are not whole UTF-8 characters is refused, never patched with U+FFFD.
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A decoded frame: its events with their text put back, and the UTF-8 each TERMINAL_CHUNK's text
 * arrived in (a view of the frame's bytes; undefined for an event carried whole), by index.
 */
export interface DecodedRunnerFrame<E = unknown> {
  events: E[];
  utf8: Array<Uint8Array | undefined>;
}

/** The frame's events with their text put back, or why the frame is inconsistent. */
export function decodeRunnerFrame(frame: RunnerFrame): ({ ok: true } & DecodedRunnerFrame) | { ok: false; message: string } {
  const { data } = frame;
  const events: unknown[] = new Array(frame.events.length);
  const utf8: Array<Uint8Array | undefined> = new Array(frame.events.length);
  let offset = 0;
  for (let i = 0; i < frame.events.length; i++) {
    const head = frame.events[i];
    if (head.bytes === undefined) {
      events[i] = head;
      continue;
    }
    if (head.type !== 'TERMINAL_CHUNK' || 'data' in head) {
      return { ok: false, message: `events.${i}: only a TERMINAL_CHUNK without data may carry bytes` };
    }
    const end = offset + head.bytes;
    if (end > data.byteLength) {
      return { ok: false, message: `events.${i}: claims bytes ${offset}..${end} but the frame carries ${data.byteLength}` };
    }
    const bytes = data.subarray(offset, end);
    let text: string;
    try {
      text = utf8Decoder.decode(bytes);
    } catch {
      return { ok: false, message: `events.${i}: its ${head.bytes} bytes are not whole UTF-8 characters` };
    }
    const { bytes: _bytes, ...rest } = head;
    events[i] = { ...rest, data: text };
    utf8[i] = bytes;
    offset = end;
  }
  if (offset !== data.byteLength) {
    return { ok: false, message: `the events claim ${offset} bytes but the frame carries ${data.byteLength}` };
  }
  return { ok: true, events, utf8 };
}

/**
 * A frame as it arrives, checked, decoded and then validated event by event exactly like a JSON
 * batch, so the ingest gets the same RunnerEvent[] either way; with each chunk's UTF-8 beside
 * (our own decoder's output: not validated again).
 */
export const RunnerFrameBatchSchema = RunnerFrameSchema.transform((frame, ctx) => {
  const decoded = decodeRunnerFrame(frame);
  if (!decoded.ok) {
    ctx.addIssue({ code: 'custom', message: decoded.message });
    return z.NEVER;
  }
  return { events: decoded.events, utf8: decoded.utf8 };
}).pipe(
  z.object({
    events: z.array(RunnerEventSchema).min(1).max(FRAME_LIMITS.EVENTS),
    utf8: z.custom<Array<Uint8Array | undefined>>(),
  }),
);

/** The frame's events alone (RunnerFrameBatchSchema without the bytes). */
export const RunnerFrameEventsSchema = RunnerFrameBatchSchema.transform((frame) => frame.events);

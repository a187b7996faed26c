import type { RunnerEvent } from '../../../protocol';

/**
 * Terminal output on its way to storage as UTF-8 bytes, not strings (issue 17). A runner batch's
 * text waited for its store round trip in the group-commit queue and the writer's pending map,
 * so every scavenge on the main thread copied it (and promoted it), and it was then structured-
 * cloned into the writer thread, copied again. As bytes in a SharedArrayBuffer it lives outside
 * the JavaScript heap: no scavenge copies it, the message to the writer shares it instead of
 * copying it (and a resend to a new writer thread shares it again), and the main thread drops
 * the text as soon as viewers and the mirror have it. The bytes are the runner's own when the
 * control plane's redaction let its text out unchanged (a flood's usual chunk), an encode only
 * for a masked chunk.
 */

export type TerminalChunk = Extract<RunnerEvent, { type: 'TERMINAL_CHUNK' }>;

/** A TERMINAL_CHUNK as stored: its text's UTF-8 and the text's length (UTF-16 code units, what segments count). */
export type StoredChunk = Omit<TerminalChunk, 'data'> & { utf8: Uint8Array; chars: number };

/** Every other runner event: stored as it came. */
export type OtherEvent = Exclude<RunnerEvent, TerminalChunk>;

/** A runner event as the ingest stores it: a TERMINAL_CHUNK carries its text as bytes. */
export type IngestEvent = OtherEvent | StoredChunk;

// fatal: bytes that are not whole UTF-8 characters are refused, never patched with U+FFFD.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of UTF-8 bytes (a view of a SharedArrayBuffer included). */
export const decodeUtf8 = (bytes: Uint8Array): string => decoder.decode(bytes);

/**
 * The batch with every TERMINAL_CHUNK's text as UTF-8, all of it in one SharedArrayBuffer:
 * `utf8Of(chunk)` when it has the chunk's bytes already (the runner's), else the text encoded.
 */
export function withOutputAsBytes(events: readonly RunnerEvent[], utf8Of: (chunk: TerminalChunk) => Uint8Array | undefined): IngestEvent[] {
  let total = 0;
  const known: Array<Uint8Array | undefined> = [];
  for (const e of events) {
    if (e.type !== 'TERMINAL_CHUNK') continue;
    const bytes = utf8Of(e);
    known.push(bytes);
    total += bytes ? bytes.byteLength : Buffer.byteLength(e.data, 'utf8');
  }
  if (!known.length) return events as IngestEvent[];
  const shared = Buffer.from(new SharedArrayBuffer(total));
  let at = 0;
  let k = 0;
  return events.map((e) => {
    if (e.type !== 'TERMINAL_CHUNK') return e;
    const bytes = known[k++];
    const length = bytes ? (shared.set(bytes, at), bytes.byteLength) : shared.write(e.data, at, 'utf8');
    const { data, ...head } = e;
    const chunk: StoredChunk = { ...head, utf8: new Uint8Array(shared.buffer, at, length), chars: data.length };
    at += length;
    return chunk;
  });
}

/** The event as the runner sent it (a stored chunk's text decoded): what an event row's payload holds. */
export function asRunnerEvent(e: IngestEvent): RunnerEvent {
  if (e.type !== 'TERMINAL_CHUNK') return e;
  const { utf8, chars: _chars, ...head } = e;
  return { ...head, data: decodeUtf8(utf8) };
}

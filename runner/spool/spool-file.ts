import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { RunnerEventSchema, type RunnerEvent, type TerminalChunk } from '../../protocol';
import type { SessionBase } from './ack-file';

/**
 * The files of a session's spool (spool.ts), and how an event is written into them.
 *
 * `<sid>.spool`, one record per event, appended in seq order: a JSON header line, and for a
 * TERMINAL_CHUNK its text as raw UTF-8 right after that line. The chunk's header has `bytes`
 * (that text's length in bytes) in place of `data`, so output is written without JSON escaping
 * and its bytes are the same ones a binary frame carries (frame.ts). Any other event is its JSON.
 *
 * A `.spool` written since issue 17's runnerbusy stop is *lapped*: it starts with a lap line
 * (`{"lap":"<token>"}`, a random token) and every record is followed by a trailer, `\x1e<token>\n`.
 * Once every event in it is acked, the spool rewinds the file instead of truncating it: a new lap
 * line at offset 0, and the next records overwrite the old ones in place. Rewriting cached pages
 * costs a tenth of what appending fresh ones and freeing them at each truncation cost (0.07 against
 * 0.46 ms per MB on this ext4; the append was a tenth of the runner's main thread in a flood).
 * Behind the last record of the lap the older laps' bytes stay; their trailers carry older tokens,
 * so reading stops at the first record whose trailer is not this lap's: the end of the lap, or a
 * record a crash cut short (its text filled with stale bytes would otherwise read as whole). The
 * stale records are all acked (the ack file was written before the rewind).
 *
 * A `.spool` without a lap line (an older runner's) is read as records only, to the end.
 * `<sid>.jsonl`, one JSON event a line, is what runners wrote before (issue 17): still read, so a
 * runner upgraded in place resends what the old one left unacked, then rewritten as `.spool`.
 */
export const SPOOL_EXT = 'spool';
export const LEGACY_EXT = 'jsonl';

const NEWLINE = 0x0a;
const LAP_PREFIX = '{"lap":"';
const LAP_SUFFIX = '"}\n';
/** 8 random bytes in hex: a lap's trailer never matches an older lap's bytes by chance. */
const LAP_TOKEN_BYTES = 8;
const TRAILER_START = 0x1e;

/** A lap of a `.spool` file: the line it starts with and the trailer after each of its records. */
export interface Lap {
  line: Buffer<ArrayBuffer>;
  trailer: Buffer<ArrayBuffer>;
}

export function newLap(): Lap {
  const token = randomBytes(LAP_TOKEN_BYTES).toString('hex');
  return { line: Buffer.from(`${LAP_PREFIX}${token}${LAP_SUFFIX}`), trailer: Buffer.from(`\x1e${token}\n`) };
}

/** The lap a `.spool` file starts with (null: an older runner's file, records only) and where its records begin. */
function lapOf(buf: Buffer): { trailer: Buffer; start: number } | null {
  const length = LAP_PREFIX.length + 2 * LAP_TOKEN_BYTES + LAP_SUFFIX.length;
  if (buf.byteLength < length || buf.toString('latin1', 0, LAP_PREFIX.length) !== LAP_PREFIX) return null;
  const token = buf.toString('latin1', LAP_PREFIX.length, LAP_PREFIX.length + 2 * LAP_TOKEN_BYTES);
  if (!/^[0-9a-f]+$/.test(token) || buf.toString('latin1', length - LAP_SUFFIX.length, length) !== LAP_SUFFIX) return null;
  return { trailer: Buffer.from(`\x1e${token}\n`), start: length };
}

/** An event as spooled: its text's UTF-8 (TERMINAL_CHUNK) kept for the frame that sends it. */
export interface SpoolRecord {
  event: RunnerEvent;
  /** The TERMINAL_CHUNK's data as UTF-8; absent for other events and for text with half a surrogate pair. */
  utf8?: Buffer<ArrayBuffer>;
  /** Bytes on disk: sizes batches (sender.ts) without encoding anything again. */
  size: number;
}

/**
 * The JSON of a session's base fields without its closing brace. A chunk's header line is this
 * and the chunk's own few fields joined as text: the same bytes JSON.stringify writes for an event
 * built as `{ ...base, ts, seq, type, data }`, without a rest, a spread and a stringify of a header
 * object per chunk. The per-chunk path runs too rarely to be optimised (baseline code), and
 * encoding the record was 40% of the spool's append in a flood (issue 17, perf).
 */
export function chunkHeadPrefix(base: SessionBase): string {
  const { session_id, org_id, repo_id, repo_ref } = base;
  return JSON.stringify({ session_id, org_id, repo_id, repo_ref }).slice(0, -1);
}

/**
 * The record of one event: the buffers to write, in order. `headPrefix` (chunkHeadPrefix of the
 * event's own base fields) makes a chunk's header line without JSON.stringify.
 */
export function encodeRecord(event: RunnerEvent, headPrefix?: string): { record: SpoolRecord; parts: Buffer[] } {
  if (event.type === 'TERMINAL_CHUNK' && isWellFormed(event.data)) {
    const { bytes, utf8 } = encodeChunk(event.data, headPrefix === undefined ? chunkHeader(event) : (n) => `${headPrefix},"ts":${event.ts},"seq":${event.seq},"type":"TERMINAL_CHUNK","bytes":${n}}\n`);
    return { record: { event, utf8, size: bytes.byteLength }, parts: [bytes] };
  }
  // Half a surrogate pair has no UTF-8 form; JSON keeps it exactly, as before.
  const line = Buffer.from(`${JSON.stringify(event)}\n`, 'utf8');
  return { record: { event, size: line.byteLength }, parts: [line] };
}

/**
 * A chunk's record in one buffer, `header(byteLength)` then the text's UTF-8, and the text's bytes
 * as a view into it (what the frame sends). Encoded straight after a header that guesses ASCII,
 * the common case, where that guess is exact; Buffer.from(text) measured the text's UTF-8 length
 * in a pass of its own first, and the header line was a second buffer (issue 17). Multi-byte text
 * keeps what fitted and encodes only the rest.
 */
function encodeChunk(text: string, header: (byteLength: number) => string): { bytes: Buffer<ArrayBuffer>; utf8: Buffer<ArrayBuffer> } {
  const guess = header(text.length);
  const at = Buffer.byteLength(guess, 'utf8');
  const bytes = Buffer.allocUnsafeSlow(at + text.length);
  const { read, written } = ENCODER.encodeInto(text, bytes.subarray(at));
  if (read === text.length) {
    // Every character took one byte (a character of more would not have fitted), so the guess holds.
    bytes.write(guess, 0, 'utf8');
    return { bytes, utf8: bytes.subarray(at) };
  }
  const rest = text.slice(read);
  const byteLength = written + Buffer.byteLength(rest, 'utf8');
  const line = header(byteLength);
  const start = Buffer.byteLength(line, 'utf8');
  const whole = Buffer.allocUnsafeSlow(start + byteLength);
  whole.write(line, 0, 'utf8');
  bytes.copy(whole, start, at, at + written);
  whole.write(rest, start + written, 'utf8');
  return { bytes: whole, utf8: whole.subarray(start) };
}

const ENCODER = new TextEncoder();

/** A chunk's header line for a text of `n` bytes. */
function chunkHeader(event: TerminalChunk): (n: number) => string {
  return (n) => `${JSON.stringify(chunkHead(event, n))}\n`;
}

type ChunkHead = { [K in Exclude<keyof TerminalChunk, 'data'>]: TerminalChunk[K] } & { bytes: number };

/**
 * A chunk's fields but `data`, and `bytes` (its text's UTF-8 length): its record's header and its
 * head in a frame (frame.ts). Written out field by field, in the event's order: a rest-and-spread
 * is slow in the baseline code the per-chunk path runs in (it runs too rarely to be optimised).
 */
export function chunkHead(e: TerminalChunk, bytes: number): ChunkHead {
  return { session_id: e.session_id, org_id: e.org_id, repo_id: e.repo_id, repo_ref: e.repo_ref, ts: e.ts, seq: e.seq, type: e.type, bytes };
}

/**
 * Reads a `.spool` file's records of session `sid`. Stops at the first record that is cut short
 * (a crash mid-append) or unreadable: what follows cannot be framed safely, and a chunk's raw
 * text must never be read as a header. In a lapped file, also at the first record without this
 * lap's trailer; the bytes behind it (`unreadableBytes`) are then mostly older laps', as expected.
 */
export function decodeRecords(buf: Buffer, sid: string): { records: SpoolRecord[]; bad: number; unreadableBytes: number; lapped: boolean } {
  const records: SpoolRecord[] = [];
  let bad = 0;
  const lap = lapOf(buf);
  let pos = lap?.start ?? 0;
  while (pos < buf.byteLength) {
    const nl = buf.indexOf(NEWLINE, pos);
    if (nl < 0) break;
    let head: Record<string, unknown>;
    try {
      head = JSON.parse(buf.toString('utf8', pos, nl)) as Record<string, unknown>;
    } catch {
      break;
    }
    let next = nl + 1;
    let candidate: unknown = head;
    let utf8: Buffer | undefined;
    if (typeof head.bytes === 'number') {
      const end = next + head.bytes;
      if (!Number.isInteger(head.bytes) || head.bytes < 0 || end > buf.byteLength) break;
      utf8 = buf.subarray(next, end);
      if (!isUtf8(utf8)) break;
      const { bytes: _bytes, ...rest } = head;
      candidate = { ...rest, data: utf8.toString('utf8') };
      next = end;
    }
    if (lap) {
      if (buf[next] !== TRAILER_START || !buf.subarray(next, next + lap.trailer.byteLength).equals(lap.trailer)) break;
      next += lap.trailer.byteLength;
    }
    const parsed = RunnerEventSchema.safeParse(candidate);
    if (parsed.success && parsed.data.session_id === sid) {
      // A copy: the record outlives the file's buffer, which would otherwise stay in memory whole.
      records.push({ event: parsed.data, utf8: utf8 && Buffer.from(utf8), size: next - pos });
    } else {
      bad++;
    }
    pos = next;
  }
  return { records, bad, unreadableBytes: buf.byteLength - pos, lapped: lap !== null };
}

/** The pre-issue-17 `.jsonl`: one event a line; a torn or foreign line is skipped. */
export function decodeLegacyJsonl(text: string, sid: string): { events: RunnerEvent[]; bad: number } {
  const events: RunnerEvent[] = [];
  let bad = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = RunnerEventSchema.safeParse(JSON.parse(line));
      if (parsed.success && parsed.data.session_id === sid) events.push(parsed.data);
      else bad++;
    } catch {
      bad++;
    }
  }
  return { events, bad };
}

/** String.prototype.isWellFormed (Node 20; not yet in the ES2023 lib the tree compiles with). */
export function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

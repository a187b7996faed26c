import { MAX_TERMINAL_FRAME_BYTES, type WireEvent } from '../../protocol';

/** Chunks per frame at most (the frame schema allows 4 096): a long buffered run is cut into several frames. */
const MAX_FRAME_CHUNKS = 1_024;
/** Bytes per frame at most, well under the schema's limit (and the browser parses a frame in one go). */
const MAX_FRAME_BYTES = MAX_TERMINAL_FRAME_BYTES / 4;

/** What a live event goes out as: a binary frame of consecutive chunks, or JSON events. */
export interface LiveEmitter {
  events(events: WireEvent[]): void;
  output(frame: { from_seq: number; sizes: number[]; ts: number; data: Uint8Array }): void;
}

/**
 * The UTF-8 bytes of each chunk of one batch, encoded once however many viewers get it (a batch
 * is fanned out to every viewer of the session; encoding per viewer would multiply the cost), or
 * not at all for the chunks whose bytes came with the batch (the runner's, unchanged).
 */
export class ChunkBytes {
  private readonly cache: Map<number, Uint8Array>;

  /** `known`: bytes of some chunks by seq, exactly their text's UTF-8. */
  constructor(known?: ReadonlyMap<number, Uint8Array>) {
    this.cache = new Map(known);
  }

  of(e: WireEvent): Uint8Array {
    let b = this.cache.get(e.seq);
    if (!b) this.cache.set(e.seq, (b = Buffer.from(e.data ?? '', 'utf8')));
    return b;
  }

  /** Takes a chunk's bytes encoded already (by another batch's ChunkBytes). */
  keep(e: WireEvent, bytes: Uint8Array): void {
    this.cache.set(e.seq, bytes);
  }
}

/**
 * Sends `events` (in seq order, already filtered to what the viewer lacks) to a binary viewer:
 * runs of TERMINAL_CHUNKs with consecutive seqs become one `terminal:output` frame; anything else
 * (state changes, file touches, a gap in seqs) goes as `session:events` in between, so the order
 * on the socket is the seq order.
 */
export function emitBinary(events: WireEvent[], out: LiveEmitter, bytes: ChunkBytes): void {
  let others: WireEvent[] = [];
  let run: WireEvent[] = [];
  let runBytes = 0;
  const flushOthers = () => {
    if (others.length) out.events(others);
    others = [];
  };
  const flushRun = () => {
    if (!run.length) return;
    const parts = run.map((e) => bytes.of(e));
    out.output({ from_seq: run[0]!.seq, sizes: parts.map((p) => p.byteLength), ts: run.at(-1)!.ts, data: parts.length === 1 ? parts[0]! : Buffer.concat(parts) });
    run = [];
    runBytes = 0;
  };
  for (const e of events) {
    if (e.type === 'TERMINAL_CHUNK') {
      flushOthers();
      const size = bytes.of(e).byteLength;
      if (run.length && (run.at(-1)!.seq + 1 !== e.seq || run.length >= MAX_FRAME_CHUNKS || runBytes + size > MAX_FRAME_BYTES)) flushRun();
      run.push(e);
      runBytes += size;
    } else {
      flushRun();
      others.push(e);
    }
  }
  flushRun();
  flushOthers();
}

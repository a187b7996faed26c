import { describe, expect, it } from 'vitest';
import { createStreamRedactor, DEFAULT_RULES } from '../../common/redact';
import { DEFAULT_WATERMARKS, type Watermarks } from '../pty/flow-control';
import { OUTPUT_BATCH_FLUSH_CHARS, OUTPUT_BATCH_MAX_CHARS } from '../pty/output-batcher';
import { PTY_READ_BUFFER_BYTES } from '../pty/pty-reader';
import { MAX_BATCH_CHARS } from '../spool/sender';
import { chunkLimitFor, outputChunkMax, TerminalOutput } from './terminal-output';
import { BESIDE_TYPING_WATERMARKS } from './typing-watch';

/** A PTY read's worth of numbered lines (nothing a redaction rule holds or masks). */
const READ = '0123456789'.repeat(409) + '\r\n';

describe('TerminalOutput chunk sizes', () => {
  it("hand a flood's flush on in chunks that one batch (one frame) can carry", () => {
    expect(OUTPUT_BATCH_FLUSH_CHARS + PTY_READ_BUFFER_BYTES).toBeLessThanOrEqual(MAX_BATCH_CHARS);
    // Each chunk stays below V8's large-object size (128 KiB) as a one-byte string.
    expect(OUTPUT_BATCH_MAX_CHARS + PTY_READ_BUFFER_BYTES).toBeLessThan(128 * 1024 - 64);
  });

  it("follow the session's flow-control window: big in a flood, small while another session is typed into", () => {
    expect(outputChunkMax(DEFAULT_WATERMARKS)).toBe(OUTPUT_BATCH_FLUSH_CHARS);
    expect(outputChunkMax(BESIDE_TYPING_WATERMARKS)).toBe(BESIDE_TYPING_WATERMARKS.high);
    let window: Watermarks = DEFAULT_WATERMARKS;
    const chunks: string[] = [];
    /** How many chunks each flush handed on together (the sender puts them in one frame). */
    const together: number[] = [];
    let inFlush = false;
    const out = new TerminalOutput(
      createStreamRedactor(DEFAULT_RULES),
      {
        chunk: (data) => {
          chunks.push(data);
          if (inFlush) together[together.length - 1]!++;
          return { seq: chunks.length, bytes: Buffer.byteLength(data) };
        },
        sent: () => undefined,
      },
      chunkLimitFor(() => window),
    );
    // Synchronous pushes: no batch window can close in between, only the size limit flushes.
    const flood = (reads: number) => {
      for (let i = 0; i < reads; i++) {
        together.push(0);
        inFlush = true;
        out.push(READ);
        inFlush = false;
        if (together.at(-1) === 0) together.pop();
      }
    };
    flood(1);
    expect(chunks).toHaveLength(1); // the first read after a quiet spell goes at once
    together.length = 0;
    flood(240);
    // A flood's flush hands on two chunks at a time (one frame), each below V8's large-object size.
    const big = chunks.slice(1).map((c) => c.length);
    expect(big.length).toBeGreaterThan(0);
    expect(together.length).toBeGreaterThan(0);
    expect(together.every((n) => n === 2)).toBe(true);
    for (const n of big) {
      expect(n).toBeGreaterThan(OUTPUT_BATCH_MAX_CHARS - READ.length);
      expect(n).toBeLessThan(OUTPUT_BATCH_MAX_CHARS + READ.length);
    }
    window = BESIDE_TYPING_WATERMARKS;
    const before = chunks.length;
    flood(60);
    const small = chunks.slice(before).map((c) => c.length);
    expect(small.length).toBeGreaterThan(2);
    // The first flush may carry what was buffered under the big limit (two chunks); every later one the small size.
    for (const n of small.slice(2)) expect(n).toBeLessThan(outputChunkMax(BESIDE_TYPING_WATERMARKS) + READ.length);
    out.end();
    expect(chunks.join('')).toBe(READ.repeat(1 + 240 + 60));
  });
});

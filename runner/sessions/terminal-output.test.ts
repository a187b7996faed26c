import { describe, expect, it } from 'vitest';
import { createStreamRedactor, DEFAULT_RULES } from '../../common/redact';
import { DEFAULT_WATERMARKS, type Watermarks } from '../pty/flow-control';
import { OUTPUT_BATCH_MAX_CHARS } from '../pty/output-batcher';
import { chunkLimitFor, outputChunkMax, TerminalOutput } from './terminal-output';
import { BESIDE_TYPING_WATERMARKS } from './typing-watch';

/** A PTY read's worth of numbered lines (nothing a redaction rule holds or masks). */
const READ = '0123456789'.repeat(409) + '\r\n';

describe('TerminalOutput chunk sizes', () => {
  it("follow the session's flow-control window: big in a flood, small while another session is typed into", () => {
    expect(outputChunkMax(DEFAULT_WATERMARKS)).toBe(OUTPUT_BATCH_MAX_CHARS);
    expect(outputChunkMax(BESIDE_TYPING_WATERMARKS)).toBe(BESIDE_TYPING_WATERMARKS.high);
    let window: Watermarks = DEFAULT_WATERMARKS;
    const chunks: string[] = [];
    const out = new TerminalOutput(createStreamRedactor(DEFAULT_RULES), { chunk: (data) => (chunks.push(data), { seq: chunks.length, bytes: Buffer.byteLength(data) }), sent: () => undefined }, chunkLimitFor(() => window));
    // Synchronous pushes: no batch window can close in between, only the size limit flushes.
    const flood = (reads: number) => {
      for (let i = 0; i < reads; i++) out.push(READ);
    };
    flood(1);
    expect(chunks).toHaveLength(1); // the first read after a quiet spell goes at once
    flood(120);
    const big = chunks.slice(1).map((c) => c.length);
    expect(big.length).toBeGreaterThan(0);
    for (const n of big) {
      expect(n).toBeGreaterThanOrEqual(OUTPUT_BATCH_MAX_CHARS);
      expect(n).toBeLessThan(OUTPUT_BATCH_MAX_CHARS + READ.length);
    }
    window = BESIDE_TYPING_WATERMARKS;
    const before = chunks.length;
    flood(60);
    const small = chunks.slice(before).map((c) => c.length);
    expect(small.length).toBeGreaterThan(1);
    // The first may carry what was buffered under the big limit; every later one the small size.
    for (const n of small.slice(1)) expect(n).toBeLessThan(outputChunkMax(BESIDE_TYPING_WATERMARKS) + READ.length);
    out.end();
    expect(chunks.join('')).toBe(READ.repeat(1 + 120 + 60));
  });
});

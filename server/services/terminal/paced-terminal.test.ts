import { describe, expect, it } from 'vitest';
import { PacedTerminal } from './paced-terminal';

const SIZE = { cols: 20, rows: 6, scrollback: 30 };
const PACING = { sliceChars: 1024, stepMs: 12 };
/** Far longer than any test waits: only an urgent read, memory or the bound under test can start a parse. */
const NEVER_MS = 3_600_000;
/** Lines `line N` from `from`, `n` of them. */
const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `line ${from + i}\r\n`).join('');

describe('PacedTerminal laziness', () => {
  it('a lazy read waits for the idle bound, then answers the screen of its place in the output', async () => {
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 1 << 20, idleMs: 20, maxAgeMs: NEVER_MS, maxHoldMs: NEVER_MS });
    t.write('first\r\n');
    const lazy = t.after((term) => term.buffer.active.getLine(0)!.translateToString(true), { depth: 0, urgent: false });
    t.write('second\r\n');
    expect(await lazy).toBe('first');
    t.dispose();
  });

  it('an urgent read parses the queue at once, lazy reads before it included, in order', async () => {
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 1 << 20, idleMs: NEVER_MS, maxAgeMs: NEVER_MS, maxHoldMs: NEVER_MS });
    const seen: string[] = [];
    t.write('a\r\n');
    const lazy = t.after((term) => seen.push(`lazy ${term.buffer.active.cursorY}`), { depth: 0, urgent: false });
    t.write('b\r\n');
    await t.after((term) => seen.push(`urgent ${term.buffer.active.cursorY}`));
    await lazy;
    expect(seen).toEqual(['lazy 1', 'urgent 2']);
    t.dispose();
  });

  it('disposing answers the lazy reads still queued with an error instead of leaving them open', async () => {
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 1 << 20, idleMs: NEVER_MS, maxAgeMs: NEVER_MS, maxHoldMs: NEVER_MS });
    t.write('queued\r\n');
    const lazy = t.after(() => 'never', { depth: 0, urgent: false });
    t.dispose();
    await expect(lazy).rejects.toThrow(/disposed/);
    await expect(t.after(() => 'late')).rejects.toThrow(/disposed/);
  });

  it('a queue past maxChars is parsed without any read asking, keeping a tail that may still scroll out', async () => {
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 2_000, idleMs: NEVER_MS, maxAgeMs: NEVER_MS, maxHoldMs: NEVER_MS });
    for (let i = 0; i < 10; i++) t.write(`line ${i}\r\n`);
    const lazy = t.after((term) => term.buffer.active.getLine(term.buffer.active.baseY + term.buffer.active.cursorY - 1)!.translateToString(true), { depth: 0, urgent: false });
    for (let i = 10; i < 500; i++) t.write(`line ${i}\r\n`);
    // Answered although nothing urgent came: memory bounded the queue.
    expect(await lazy).toBe('line 9');
    t.dispose();
  });

  it('past maxAgeMs a lazy restore point waits for a buffer of line feeds after it, so it is read without its scrollback', async () => {
    // A buffer's worth here: scrollback 30 + 2·6 rows + 1 = 43 line feeds. maxAgeMs passes at
    // once and the hold never does: only the text after the read lets it through.
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 1 << 20, idleMs: NEVER_MS, maxAgeMs: 0, maxHoldMs: NEVER_MS });
    t.write(lines(0, 200));
    const point = t.after((_term, _serialize, scrolledOut) => scrolledOut, { depth: 30, urgent: false, depthIfScrolledOut: 0 });
    // Answered here (as before maxHoldMs), it would have been read with its whole scrollback.
    t.write(lines(200, 40));
    t.write(lines(240, 10));
    expect(await point).toBe(true);
    await t.after(() => null, { depth: 0 });
    // What scrolled out before it was skipped, not parsed.
    expect(t.skippedChars).toBeGreaterThan(lines(0, 150).length);
    t.dispose();
  });

  it('a lazy read that text never settles is answered once maxHoldMs runs out', async () => {
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 1 << 20, idleMs: NEVER_MS, maxAgeMs: 0, maxHoldMs: 30 });
    t.write(lines(0, 3));
    const held = t.after((term) => term.buffer.active.cursorY, { depth: 0, urgent: false });
    t.write('more\r\n');
    expect(await held).toBe(3);
    t.dispose();
  });

  it('the scroll-out search looks at each queued byte once, though every drain leaves the newest text queued', async () => {
    // Past maxChars each drain parses all but a tail, which its search has already scanned to the end.
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 2_000, idleMs: NEVER_MS, maxAgeMs: NEVER_MS, maxHoldMs: NEVER_MS });
    let total = 0;
    for (let i = 0; i < 3_000; i++) {
      const line = `line ${i}\r\n`;
      t.write(line);
      total += line.length;
    }
    const last = await t.after((term) => term.buffer.active.getLine(term.buffer.active.baseY + term.buffer.active.cursorY - 1)!.translateToString(true), { depth: 5 });
    expect(last).toBe('line 2999');
    expect(t.skippedChars).toBeGreaterThan(total / 2);
    expect(t.scannedChars).toBeLessThanOrEqual(total);
    t.dispose();
  });

  it('counts every character written once, as parsed or as skipped (what the mirror snapshot cadence reads)', async () => {
    const t = new PacedTerminal(SIZE, PACING, { maxChars: 1 << 20, idleMs: NEVER_MS, maxAgeMs: NEVER_MS, maxHoldMs: NEVER_MS });
    let total = 0;
    for (let i = 0; i < 2_000; i++) {
      const line = `\x1b[3${i % 8}mline ${i}\x1b[0m\r\n`;
      t.write(line);
      total += line.length;
    }
    await t.after(() => null, { depth: 5 });
    expect(t.skippedChars).toBeGreaterThan(total / 2);
    expect(t.parsedChars + t.skippedChars).toBe(total);
    t.dispose();
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runEnd } from './scroll-out';

/**
 * runEnd over UTF-8 bytes (the mirror's queue, read four bytes at a time where they are plain
 * ASCII) must stop exactly where runEnd over the same text does (a regex), from any character, at
 * any alignment of the bytes in their buffer.
 */
const pieces = fc.constantFrom(
  'a', 'plain text ', '0123456789', '\r\n', '\n', '\t', '\x07', '~', ' ', '\x7f', '\x1b[0m', '\x1b[1;32m', '\x1b[38:5:1m', '\x1b[2J', '\x1b]0;t\x07',
  '\x1b', '\x1b[', '\x1b[12', '\x00', '\x1a', 'é', '€', '😀', '\u0085', '\u0090', '\u009b', '\u00a0', '\u00c2',
);
const texts = fc.array(fc.oneof({ weight: 6, arbitrary: fc.string({ unit: fc.constantFrom('x', 'Y', '0', '-', ' ', '.'), maxLength: 40 }) }, { weight: 4, arbitrary: pieces }), { maxLength: 40 }).map((p) => p.join(''));

describe('runEnd of UTF-8 bytes', () => {
  it('stops where runEnd of the text does, from every character and alignment', () => {
    fc.assert(
      fc.property(texts, fc.nat({ max: 7 }), fc.nat(), (text, pad, pick) => {
        const utf8 = Buffer.from(text, 'utf8');
        // The text at `pad` bytes into a bigger buffer: its words start unaligned.
        const holder = new Uint8Array(new ArrayBuffer(pad + utf8.length + 3));
        holder.set(utf8, pad);
        const bytes = holder.subarray(pad, pad + utf8.length);
        const chars = Array.from(text);
        const fromChar = chars.length ? chars.slice(0, pick % (chars.length + 1)).join('').length : 0;
        const fromByte = Buffer.byteLength(text.slice(0, fromChar));
        const want = Buffer.byteLength(text.slice(0, runEnd(text, fromChar)));
        expect(runEnd(bytes, fromByte)).toBe(want);
      }),
      { numRuns: 3000 },
    );
  });

  it('skips a long plain run and finds the stop after it', () => {
    const text = 'x'.repeat(1001) + '\r\n'.repeat(3) + 'y'.repeat(77) + '\x1b[0m' + 'z'.repeat(50) + '\x1b[H' + 'w';
    for (let pad = 0; pad < 4; pad++) {
      const holder = new Uint8Array(pad + text.length);
      holder.set(Buffer.from(text), pad);
      expect(runEnd(holder.subarray(pad), 0)).toBe(text.indexOf('\x1b[H'));
      expect(runEnd(holder.subarray(pad), 1090)).toBe(text.indexOf('\x1b[H'));
    }
  });
});

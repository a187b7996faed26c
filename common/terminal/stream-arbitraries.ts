import fc from 'fast-check';

/**
 * Terminal output for the property tests of the lazy mirror (scroll-out and restore points):
 * long plain runs a cut or a restore point can use, and everything that must stop one.
 */

const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('');

/** Runs `scale` times as long as `run`'s, for a buffer that many times as deep. */
export const longRun = (scale: number) =>
  fc.oneof(
    fc.integer({ min: 10 * scale, max: 150 * scale }).map((n) => lines(n, (i) => `${i}\r\n`)),
    fc.tuple(fc.integer({ min: 10 * scale, max: 120 * scale }), fc.integer({ min: 0, max: 7 })).map(([n, c]) =>
      lines(n, (i) => `\x1b[3${(i + c) % 8}m[${i}] ${i % 3 ? 'INFO' : '\x1b[1mWARN\x1b[22m'}\x1b[0m build ${'x'.repeat(i % 25)}\r\n`),
    ),
    fc.integer({ min: 10 * scale, max: 80 * scale }).map((n) => lines(n, (i) => `${'日本語'.repeat(1 + (i % 5))}\u{1F600}e\u0301\r\n`)),
    fc.integer({ min: 10 * scale, max: 80 * scale }).map((n) => lines(n, (i) => `\x1b[48;2;${i % 256};0;0m\x1b[58;5;${i % 8}m\x1b[4:3mbg ${i}\x1b[59m\x1b[K\r\n${i % 4 ? '' : '\x1b[0m'}`)),
    fc.integer({ min: 10 * scale, max: 80 * scale }).map((n) => lines(n, (i) => `\t${i}\x07\rprogress ${i}%\r\n\r\n`)),
  );

/** Long runs the shortcut may cut (each holds enough line feeds to push a 6×20 + 30 buffer out). */
export const run = longRun(1);

/**
 * Everything the mirror must keep exact across a cut: state a run may start in, and controls that
 * must stop a cut. Not DECAWM off (`CSI ? 7 l`): with it, xterm itself serialises wide characters
 * at the right margin differently depending on where its input was split into writes (reproduced
 * with a plain Terminal fed the same bytes in 12-character writes), so no reference could be exact.
 */
export const token = fc.oneof(
  { weight: 4, arbitrary: run },
  { weight: 3, arbitrary: fc.string({ unit: fc.constantFrom(...'abcxyz0123 -_'.split('')), minLength: 1, maxLength: 30 }) },
  { weight: 2, arbitrary: fc.constantFrom('日本語', '\u{1F600}', 'e\u0301', '\u0301', '\t', '\r\n', '\n', '\r', '\b', '\x07') },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 107 }).map((n) => `\x1b[${n}m`) },
  { weight: 1, arbitrary: fc.constantFrom('\x1b[38;5;200m', '\x1b[48;2;1;2;3m', '\x1b[58:2::9:9:9m', '\x1b[4:3m', '\x1b[59m', '\x1b[m', '\x1b[0;1;4m') },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 24 })).map(([r, c]) => `\x1b[${r};${c}H`) },
  { weight: 1, arbitrary: fc.constantFrom('\x1b[A', '\x1b[2B', '\x1b[3C', '\x1b[D', '\x1b[K', '\x1b[2J', '\x1b[3J', '\x1b[L', '\x1b[M', '\x1b[2@', '\x1b[P', '\x1bM', '\x1bD', '\x1bE') },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 3, max: 8 })).map(([t, b]) => `\x1b[${t};${b}r`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '\x1b[r', '\x1b[?1049h', '\x1b[?1049l', '\x1b[?47h', '\x1b[?47l', '\x1b[?7h', '\x1b[4h', '\x1b[4l', '\x1b[?6h', '\x1b[?6l', '\x1b[20h', '\x1b[20l',
      '\x1b[?45h', '\x1b[?45l', '\x1b7', '\x1b8', '\x1b(0', '\x1b(B', '\x0e', '\x0f', '\x1b]0;title\x07', '\x1b]8;;http://x\x07', '\x1b]8;;\x07',
      '\x1b[3b', 'a\x1b[5b', '\x9b31m', '\x85', '\x1b[?25l', '\x1bc', '\x1b[!p', '\x0b', '\x0c', '\x1b[1;3H\x1b[?6h',
    ),
  },
);

/** A write is cut once more at an arbitrary place (inside an escape sequence or a surrogate pair too). */
export const write = fc.tuple(fc.array(token, { minLength: 1, maxLength: 8 }), fc.nat()).map(([t, at]): { write: string }[] => {
  const text = t.join('');
  const cut = at % (text.length + 1);
  return [{ write: text.slice(0, cut) }, { write: text.slice(cut) }].filter((s) => s.write.length > 0);
});

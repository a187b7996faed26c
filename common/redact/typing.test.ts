import { describe, expect, it } from 'vitest';
import { createStreamRedactor } from './index';

/**
 * A key's echo is let out as it comes (issue 17's key → glyph): with the built-in rules no rule may
 * hold the first two keys of a word, whatever they are. `e` was held until the next key once
 * (a masked prefix, `eyJhdXRocyI6`, began with it), so every word starting with `e` showed late.
 */
describe('typed keys with the built-in rules', () => {
  const printable = Array.from({ length: 94 }, (_, k) => String.fromCharCode(33 + k));

  it('the first key of a word is let out at once, after a prompt or a space', () => {
    for (const before of ['$ ', 'ls ', '']) {
      for (const key of printable) {
        const r = createStreamRedactor();
        r.push(before);
        expect(r.push(key), JSON.stringify(before + key)).toBe(key);
      }
    }
  });

  it('so is its second key', () => {
    for (const first of printable) {
      for (const key of printable) {
        const r = createStreamRedactor();
        r.push(`$ ${first}`);
        expect(r.push(key), JSON.stringify(first + key)).toBe(key);
      }
    }
  });

  it('typed commands come out key by key', () => {
    for (const line of ['echo hello world', 'export EDITOR=vim', 'eyes --open', 'git commit -m "fix"', 'LS -la', 'ZXing']) {
      const r = createStreamRedactor();
      let out = '';
      for (const key of line) expect((out += r.push(key)), line).toBe(line.slice(0, out.length));
      expect(out).toBe(line);
    }
  });
});

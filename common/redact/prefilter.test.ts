import { describe, expect, it } from 'vitest';
import { buildCorpus, leaked } from './corpus';
import { CONTEXT_CHARS, createStreamRedactor, DEFAULT_RULES } from './index';
import { COVER_MAX_RANGES, coverRanges, loopTables } from './compiled';
import { compile } from './scan';
import { streamed } from './testing';

/**
 * The scan's prefilter (a gate table: may anything start here?) and the stream's incremental
 * resume (only undecided candidates and new text are read again) must never release what the
 * full check would have masked. These tests fail if either skips a place a secret starts.
 */
const corpus = buildCorpus(17);
const secretCases = corpus.cases.filter((c) => c.kind === 'secret');
/** Every SAMPLE-th secret case of the corpus (each rule appears in several; the full corpus runs elsewhere). */
const SAMPLE = 5;
/** How far into the lead the cuts start. */
const LEAD_CUTS = 24;
/**
 * ~18,000 fresh redactors per lead (a few seconds of CPU): on the shared 2-core machine, beside
 * the other redaction test files, the longest lead took 13–24 s of wall time on the tree before
 * and after issue 17's scan work alike, past vitest's 20 s default.
 */
const EVERY_CUT_TIMEOUT_MS = 90_000;
/** V8's regexp-compiler.cc kMaxRangesForInlineBranchGeneration. */
const V8_INLINE_CLASS_RANGES = 16;
const oneWrite = (text: string, secrets: Record<string, string> = {}) => streamed(text, secrets);

/** Text a secret may follow in a terminal: colours, a long line (the context gets trimmed), digits. */
const LEADS: Array<[string, string]> = [
  ['colour code', '\x1b[0m\x1b[01;32m'],
  ['a coloured line', '\x1b[33mwarning\x1b[0m: disk 91% full\r\n'],
  ['numbered lines', '000000001\r\n000000002\r\n'],
  ['past the context', `${'lorem ipsum dolor '.repeat(Math.ceil((CONTEXT_CHARS * 2) / 18))}\r\n`],
];

describe('the scan prefilter', () => {
  it('lets through every place the full check would ask a rule or a secret form', () => {
    const c = compile(DEFAULT_RULES, { API_TOKEN: 'zz-very-private-value-123' });
    for (let code = 0; code < 128; code++) {
      const forms = c.asciiLiterals[code] !== undefined;
      for (let prev = 0; prev < 128; prev++) {
        const asked = forms || c.byFirst[code].some((r) => r.notAfter === null || !r.notAfter.has(prev));
        if (asked) expect(c.gate[prev * 128 + code], `prev ${prev} code ${code}`).toBe(1);
      }
      // After an escape, at the start, or after a non-ASCII character every rule may start.
      if (forms || c.byFirst[code].length > 0) expect(c.gate[128 * 128 + code], `start code ${code}`).toBe(1);
    }
  });

  it('skips most of a flood of numbered lines and words (the point of it)', () => {
    const c = compile(DEFAULT_RULES, {});
    const text = '000000042\r\nflooding the terminal with output\r\n';
    let open = 0;
    let prev = 128;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      open += c.gate[prev * 128 + code];
      prev = code;
    }
    expect(open).toBeLessThan(text.length / 4);
  });

  it("searches with a character class V8 tests inline: at most COVER_MAX_RANGES ranges, digits and line ends outside", () => {
    // Past 16 ranges V8 calls out of the regex for every character read: 8x the search's cost (issue 17).
    for (const secrets of [{}, corpus.orgSecrets, { API_TOKEN: 'zz-very-private-value-123', OTHER: 'Qk9-jw_Yz!77' }]) {
      const cover = loopTables(compile(DEFAULT_RULES, secrets)).cover;
      const ranges = cover.source.match(/\\u[0-9a-f]{4}(-\\u[0-9a-f]{4})?/g)!;
      expect(ranges.length).toBeLessThanOrEqual(Math.min(COVER_MAX_RANGES, V8_INLINE_CLASS_RANGES));
      expect(cover.source).toBe(`[${ranges.join('')}]`);
      cover.lastIndex = 0;
      expect(cover.test('0123456789 \t\r\n'.repeat(4))).toBe(false);
    }
  });

  it('fills the gaps between cover ranges that hold the least common characters, and keeps every cover character', () => {
    const inCover = new Uint8Array(128);
    // Every other capital, and `-` / `/` around the digits: 15 ranges and the non-ASCII one.
    for (let code = 65; code < 91; code += 2) inCover[code] = 1;
    inCover[45] = inCover[58] = 1;
    const ranges = coverRanges(inCover, 6);
    expect(ranges).toHaveLength(6);
    const covered = (code: number) => ranges.some(([a, b]) => a <= code && code <= b);
    for (let code = 0; code < 128; code++) if (inCover[code] === 1) expect(covered(code), `code ${code}`).toBe(true);
    expect(covered(0x80) && covered(0xffff)).toBe(true);
    // The capitals' gaps are filled before the digits between `-` and `:`.
    for (let code = 48; code <= 57; code++) expect(covered(code), `digit ${code}`).toBe(false);
    expect(coverRanges(inCover, 64)).toHaveLength(16);
  });
});

describe('incremental stream scanning', () => {
  for (const [lead, prefix] of LEADS) {
    it(`a secret after ${lead}, split into two pushes at every position, never shows and reads as one write`, () => {
      for (const c of secretCases.filter((_, k) => k % SAMPLE === 0)) {
        const text = prefix + c.text;
        const whole = oneWrite(text, corpus.orgSecrets);
        expect(leaked(c, whole), `${c.id} in one write`).toBeNull();
        // Every cut from just before the secret's line to its end (cuts inside the lead are the
        // same few cases again and again).
        for (let cut = Math.max(1, prefix.length - LEAD_CUTS); cut < text.length; cut++) {
          const out = streamed(text, corpus.orgSecrets, [cut]);
          if (out !== whole) expect.fail(`${c.id} after ${lead} split at ${cut}: ${JSON.stringify(out)} != ${JSON.stringify(whole)}`);
        }
      }
    }, EVERY_CUT_TIMEOUT_MS);
  }

  it('a secret split across three pushes anywhere near its start never shows', () => {
    for (const c of secretCases) {
      const text = `\x1b[36m${c.text}`;
      const whole = oneWrite(text, corpus.orgSecrets);
      for (let a = 1; a < Math.min(text.length, 40); a++) {
        const b = a + 1 + ((a * 7) % 23);
        const out = streamed(text, corpus.orgSecrets, [a, b]);
        expect(leaked(c, out), `${c.id} split at ${a}, ${b}`).toBeNull();
        expect(out, `${c.id} split at ${a}, ${b}`).toBe(whole);
      }
    }
  });

  it('a label released long ago still masks its value when the value arrives later', () => {
    const r = createStreamRedactor();
    let out = r.push('export GITHUB_TOKEN=');
    out += r.push(`ghp_${'A1b2C3d4E5'.repeat(3)}`);
    for (let k = 0; k < 50; k++) out += r.push('Z9');
    out += r.push('\r\n') + r.end();
    expect(out).not.toMatch(/A1b2C3d4E5/);
    expect(out).toContain('[redacted]');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCorpus, seeded } from './corpus';
import { DEFAULT_RULES, type MaskEvent } from './index';
import { OUTPUT_KINDS } from './output-kinds';
import type { Rand } from './rule';
import { compile, scan, scanEvery, type Compiled, type ScanResult } from './scan';
import { createStreamRedactorFrom, redactWhole } from './stream';
import { TerminalParser } from './terminal';

/**
 * The prefiltered scan (per-character loop on first-two-character tables, anchored rules only
 * near their anchors) against the reference that asks every rule at every position: the same
 * masks, holds and resume points, and streams that release the same bytes and report the same
 * masks for any chunking of real-looking output with secrets planted in it.
 */
const corpus = buildCorpus(23);
const secretCases = corpus.cases.filter((c) => c.kind === 'secret');
const harmless = corpus.cases.filter((c) => c.kind === 'harmless');
/** Texts per output kind (each a few KB with secrets and look-alikes planted). */
const TEXTS_PER_KIND = 6;
const TEXT_CHARS = 6 * 1024;
/** Random chunkings per text. */
const CHUNKINGS = 4;
/** Random texts are at least this long (scan() reads shorter ones with the reference). */
const LONG_TEXT = 1500;
/** Cuts of the scan test are 1..CUT_STRIDE characters apart. */
const CUT_STRIDE = 6;

const COLOURS = ['', '\x1b[1m', '\x1b[32m', '\x1b[0m', '\x1b[7m', '\x1b]0;title\x07', '\x1b[2K\r'];

/** `base` with corpus cases (secrets and harmless look-alikes) planted at line starts and mid-line, some coloured. */
function planted(r: Rand, base: string): string {
  const lines = base.split('\r\n');
  for (let k = 0; k < 8; k++) {
    const c = r.int(3) === 0 ? r.pick(harmless) : r.pick(secretCases);
    const at = r.int(lines.length);
    const colour = r.pick(COLOURS);
    const line = lines[at];
    const cut = r.int(line.length + 1);
    lines[at] = r.int(2) === 0 ? `${colour}${c.text}` : `${line.slice(0, cut)} ${colour}${c.text}${r.pick(COLOURS)} ${line.slice(cut)}`;
  }
  // Org secrets in their raw form too (the corpus holds their other encodings).
  for (const v of Object.values(corpus.orgSecrets).slice(0, 3)) lines[r.int(lines.length)] += ` ${v}`;
  return lines.join('\r\n');
}

/** Cuts: many small pushes, a few big ones, single characters, and cuts inside escape sequences. */
function chunking(r: Rand, n: number): number[] {
  const style = r.int(3);
  const cuts: number[] = [];
  for (let at = 0; at < n; ) {
    at += style === 0 ? 1 + r.int(8) : style === 1 ? 1 + r.int(200) : 1 + r.int(3000);
    cuts.push(Math.min(at, n));
  }
  return cuts;
}

function streamWith(c: Compiled, text: string, cuts: readonly number[]): { out: string; masks: MaskEvent[] } {
  const masks: MaskEvent[] = [];
  const s = createStreamRedactorFrom(c, { onMask: (m) => masks.push(m) });
  let out = '';
  let at = 0;
  for (const cut of cuts) {
    out += s.push(text.slice(at, cut));
    at = cut;
  }
  return { out: out + s.end(), masks };
}

describe('the prefiltered redactor equals the reference', () => {
  const fast = compile(DEFAULT_RULES, corpus.orgSecrets);
  const reference = compile(DEFAULT_RULES, corpus.orgSecrets, { reference: true });

  it('compiles the built-in rules prefiltered (every rule has prefixes or anchors)', () => {
    expect(fast.prefiltered).toBe(true);
    expect(reference.prefiltered).toBe(false);
  });

  for (const [k, kind] of OUTPUT_KINDS.entries()) {
    it(`${kind.name}: every chunking releases the same bytes and reports the same masks`, () => {
      const r = seeded(1000 + k);
      let masked = 0;
      for (let t = 0; t < TEXTS_PER_KIND; t++) {
        const text = planted(r, kind.make(r, TEXT_CHARS));
        expect(redactWhole(text, fast)).toBe(redactWhole(text, reference));
        for (let ch = 0; ch < CHUNKINGS; ch++) {
          const cuts = chunking(r, text.length);
          const a = streamWith(fast, text, cuts);
          const b = streamWith(reference, text, cuts);
          if (a.out !== b.out) expect.fail(`${kind.name} text ${t} chunking ${ch}: outputs differ at ${[...a.out].findIndex((x, i) => x !== b.out[i])}`);
          expect(a.masks).toEqual(b.masks);
          masked += a.masks.length;
        }
      }
      // The planted secrets were found (the comparison is not between two redactors that see nothing).
      expect(masked).toBeGreaterThan(TEXTS_PER_KIND * CHUNKINGS * 3);
    });
  }

  it('scan answers the same at every cut of every corpus case, with and without escape breaks, final or not', () => {
    const r = seeded(7);
    for (const c of corpus.cases) {
      const text = `x ${c.text} --password=abc123 postgres://u:p@h 12:00:05 ${c.text}`;
      // Cuts a few characters apart (each cut ends the text inside a different part of a match).
      for (let cut = 0; cut <= text.length; cut += 1 + (cut % CUT_STRIDE)) {
        const s = text.slice(0, cut);
        const breaks = r.int(2) === 0 ? [] : [...new Set(Array.from({ length: 4 }, () => r.int(cut + 1)))].sort((x, y) => x - y);
        const from = r.int(3) === 0 ? r.int(cut + 1) : 0;
        // Sometimes only the places before `to` (a stream's boundary window).
        const to = r.int(3) === 0 ? from + r.int(cut - from + 1) : cut;
        for (const final of [false, true]) {
          const a = scan(s, from, final, fast, breaks, 0, to);
          const b = scanEvery(s, from, final, reference, breaks, 0, to);
          const got = JSON.stringify({ ...a, masks: a.masks.map(({ rank: _, ...m }) => m) });
          if (got !== JSON.stringify(b)) expect.fail(`${c.id} cut ${cut} from ${from} to ${to} final ${final}: ${got} != ${JSON.stringify(b)}`);
        }
      }
    }
    // The reference asks every rule at every position of every cut: ~20 s on a loaded 2-core machine.
  }, 90_000);
});

/** scan()'s answers are the reference's (the rank it adds for sorting aside). */
function expectSame(a: ScanResult, b: ScanResult, what?: string): void {
  expect(JSON.stringify({ ...a, masks: a.masks.map(({ rank: _, ...m }) => m) }), what).toBe(JSON.stringify(b));
}

/**
 * The pieces joined (again and again, rotated, past SHORT_SCAN: shorter texts are read by the
 * reference itself), scanned from a place in its first third (or 0), with escape breaks, up to a
 * last place asked: the prefiltered scan answers as the reference does.
 */
function expectReferenceAnswers(pieces: string[], at: number, final: boolean, rawBreaks: number[], rawTo: number | null, [fast, reference]: readonly [Compiled, Compiled]): void {
  let s = pieces.join('');
  for (let k = 1; s.length < LONG_TEXT; k++) s += pieces.slice(k % pieces.length).concat(pieces.slice(0, k % pieces.length)).join('');
  const from = at % (s.length + 1) < s.length / 3 ? at % (s.length + 1) : 0;
  const breaks = [...new Set(rawBreaks.map((x) => x % (s.length + 1)))].sort((x, y) => x - y);
  const to = rawTo === null ? s.length : from + (rawTo % (s.length - from + 1));
  expectSame(scan(s, from, final, fast, breaks, 0, to), scanEvery(s, from, final, reference, breaks, 0, to));
}

describe('the scan on random text equals the reference', () => {
  // Long runs without any character of the open pairs' cover (digits, spaces, line ends) are
  // passed by a native search, with-cover stretches one character at a time, and the scan
  // switches between the two wherever the cover's characters get dense: random mixes of both,
  // with token fragments, the corpus's secrets and look-alikes, org secret values, non-ASCII text
  // and escape breaks anywhere.
  const secrets = { ...corpus.orgSecrets, API_TOKEN: 'Zq9-private-value-1234', DB_PASS: '4242-4242-9876-hunter' };
  const withSecrets = [compile(DEFAULT_RULES, secrets), compile(DEFAULT_RULES, secrets, { reference: true })] as const;
  const builtIn = [compile(DEFAULT_RULES, {}), compile(DEFAULT_RULES, {}, { reference: true })] as const;
  const piece = fc.oneof(
    fc.constantFrom('0123456789\r\n', '42\r\n', '   ', '\r\n', '1/', '2/', 'v1', 'M0', 'ghp_', 'AKIA', 'xoxb-', 'sk-', 'password=', 'token: ', ':', '-', '--', '=', 'é', '😀', 'Q~', 'https://u:p@h'),
    fc.constantFrom('Zq9-private-value-1234', '4242-4242-9876-hunter', 'NDI0Mi00MjQy', 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEF'),
    fc.constantFrom(...corpus.cases.map((c) => c.text)),
    fc.stringMatching(/^[0-9 \r\n]{1,300}$/),
    fc.stringMatching(/^[a-zA-Z0-9_\-/:=. ]{1,40}$/),
    // Endings a rule or form may go on from: the last character is asked with no pair.
    fc.constantFrom('e', 'ey', 'x', 'Z', 'M', '4', 'gh', 'AK'),
  );
  it('masks, holds and resume points, for any mix, start, ending and last place asked', () => {
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 80, size: 'max' }), fc.nat(), fc.boolean(), fc.boolean(), fc.array(fc.nat(), { maxLength: 6 }), fc.option(fc.nat()), (pieces, at, final, org, rawBreaks, rawTo) =>
        expectReferenceAnswers(pieces, at, final, rawBreaks, rawTo, org ? withSecrets : builtIn),
      ),
      { numRuns: 400, seed: 17 },
    );
  });
});

describe('the scan on text no secret key can end in equals the reference', () => {
  // No letter a key's suffix ends with (numbered lines, counters, separators): the anchored rules
  // whose windows need one skip every anchor but those whose run may reach the end of the text.
  const fast = compile(DEFAULT_RULES, {});
  const reference = compile(DEFAULT_RULES, {}, { reference: true });
  const piece = fc.oneof(
    fc.constantFrom('\n', '\r\n', '0'.repeat(64), '0'.repeat(65), '0'.repeat(66), '0'.repeat(67), '  ', '=', ':', '-', '_', '.'),
    fc.stringMatching(/^[0-9 \r\n._=:-]{1,300}$/),
  );
  it('masks, holds and resume points, for any mix, start, ending and last place asked', () => {
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 60, size: 'max' }), fc.nat(), fc.boolean(), fc.array(fc.nat(), { maxLength: 4 }), fc.option(fc.nat()), (pieces, at, final, rawBreaks, rawTo) =>
        expectReferenceAnswers(pieces, at, final, rawBreaks, rawTo, [fast, reference]),
      ),
      { numRuns: 300, seed: 29 },
    );
  });

  it('still finds a table row or an assignment after a flood of numbered lines, at the end of the text or not', () => {
    const lines = Array.from({ length: 40 }, (_, k) => `${String(k).padStart(99, '0')}\r\n`).join('');
    for (const tail of ['db_password   hunter2-Secret\n', 'db_password   hunter2-Secret', '\nAPI_TOKEN=Zq9privatevalue1234\n', '\ndb_pass']) {
      for (const final of [false, true]) {
        const s = lines + tail;
        expectSame(scan(s, 0, final, fast, []), scanEvery(s, 0, final, reference, []), JSON.stringify(tail));
      }
    }
  });
});

describe('any chunking releases what one whole push releases', () => {
  // A PTY hands output on in reads of up to 4095 characters, a runner's batches are up to 64 KB,
  // and a keystroke's echo is one character: each mix of those, on every kind of output with
  // secrets planted in it, must come out byte for byte as the whole text pushed at once does.
  const fast = compile(DEFAULT_RULES, corpus.orgSecrets);
  const SIZES = [1, 2, 7, 64, 511, 513, 1000, 4095, 4096, 16 * 1024];
  for (const [k, kind] of OUTPUT_KINDS.entries()) {
    it(`${kind.name}: 4 KB reads, small writes and big batches`, () => {
      const r = seeded(2000 + k);
      for (let t = 0; t < 3; t++) {
        const text = planted(r, kind.make(r, 40 * 1024));
        const whole = streamWith(fast, text, [text.length]);
        for (let ch = 0; ch < 4; ch++) {
          const cuts: number[] = [];
          // ch 0: 4 KB reads; then ever more mixed sizes.
          for (let at = 0; at < text.length; ) cuts.push(Math.min(text.length, (at += ch === 0 ? 4096 : r.pick(SIZES.slice(0, 4 + ch * 2)))));
          const got = streamWith(fast, text, cuts);
          if (got.out !== whole.out) expect.fail(`${kind.name} text ${t} chunking ${ch}: differs at ${[...got.out].findIndex((x, i) => x !== whole.out[i])}`);
          expect(got.masks).toEqual(whole.masks);
        }
      }
    });
  }
});

/** Text and sequences as the parser reports them, adjacent text merged (chunking splits text). */
function parsed(text: string, chunk: number): string[] {
  const p = new TerminalParser();
  const out: string[] = [];
  let t = '';
  for (let at = 0; at < text.length; at += chunk) {
    p.feed(
      text.slice(at, at + chunk),
      (x) => (t += x),
      (raw, payload) => {
        out.push(`T${t}`, `E${raw}|${payload?.join(',') ?? ''}`);
        t = '';
      },
    );
  }
  out.push(`T${t}`, `O${p.takeOpen()}`);
  return out;
}

describe('the terminal parser', () => {
  it('reads whole CSIs at once exactly as its state machine reads them a character at a time', () => {
    const r = seeded(11);
    const soup = ['\x1b[0m', '\x1b[1;32m', '\x1b[38;2;10;20;30m', '\x1b[?2004h', '\x1b[K', '\x1b[12G', `\x1b[${'1;'.repeat(40)}m`, `\x1b[${'9'.repeat(70)}m`, '\x1b[\x01m', '\x1b[1\x1b[2m', '\x1b]0;t\x07', '\x1b(B', '\x1b7', '\x9b1m', 'text ', 'ünï ', '\r\n'];
    for (const [k, kind] of OUTPUT_KINDS.entries()) {
      let text = kind.make(seeded(k), 2048);
      for (let n = 0; n < 200; n++) {
        const at = r.int(text.length);
        text = text.slice(0, at) + r.pick(soup) + text.slice(at);
      }
      const reference = parsed(text, 1);
      expect(parsed(text, text.length), kind.name).toEqual(reference);
      expect(parsed(text, 1 + r.int(100)), kind.name).toEqual(reference);
    }
  });

  it('finds each C1 sequence start in a chunk as its state machine does (the chunk is searched for them once)', () => {
    for (const c1 of ['\x90', '\x98', '\x9b', '\x9d', '\x9e', '\x9f']) {
      const text = `${'0'.repeat(99)}\r\n${c1}1;x\x07 after`;
      const reference = parsed(text, 1);
      expect(reference.some((x) => x.startsWith(`E${c1}`)), JSON.stringify(c1)).toBe(true);
      expect(parsed(text, text.length), JSON.stringify(c1)).toEqual(reference);
    }
  });
});

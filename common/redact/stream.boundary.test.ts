import { describe, expect, it } from 'vitest';
import { buildCorpus, leaked, seeded } from './corpus';
import { createStreamRedactor, DEFAULT_RULES } from './index';
import { OUTPUT_KINDS } from './output-kinds';
import { LOOKBEHIND } from './rule';
import { LINE_LOOKBACK } from './rules/structural/shared';

/**
 * A long push is scanned where it lies (stream.ts, Window.scan): the places near its start in a
 * boundary window joined to the held text, the rest in the push itself. Every corpus case, placed
 * at every distance from a push's start that matters there (inside the rules' look-behind, at the
 * window's edges, across the cut), must come out as pushes short enough to be joined and scanned
 * whole make it come out.
 */
const corpus = buildCorpus(31);
const { orgSecrets } = corpus;
/** Below stream.ts's IN_PLACE_MIN: every push of these is joined to the held text. */
const JOINED_PUSH = 1000;
/** Where a case starts, counted from the long push's start (negative: it starts in the push before). */
const OFFSETS = [-40, -7, -1, 0, 1, 2, 5, 64, LOOKBEHIND - 20, LOOKBEHIND - 1, LOOKBEHIND, LOOKBEHIND + 1, 300, 480, 511, 512, 513, 600, 2100];

function out(text: string, cuts: readonly number[]): string {
  const r = createStreamRedactor(DEFAULT_RULES, orgSecrets);
  let s = '';
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    s += r.push(text.slice(at, cut));
    at = cut;
  }
  return s + r.end();
}

const everyJoined = (n: number) => Array.from({ length: Math.floor((n - 1) / JOINED_PUSH) }, (_, k) => (k + 1) * JOINED_PUSH);

describe('a long push scanned in place', () => {
  it('keeps the rules within the look-behind it relies on', () => {
    expect(LINE_LOOKBACK).toBeLessThan(LOOKBEHIND);
  });

  it('reads the line before the push start for a candidate still open past the boundary window', () => {
    // A .netrc password is judged by the line before it (`machine … login …`, up to LINE_LOOKBACK
    // back); values near the boundary window's length are still undecided at its end.
    const filler = OUTPUT_KINDS[0].make(seeded(1), 4 * 1024);
    for (const n of [20, 480, 500, 505, 512, 600]) {
      const value = 'Hq7'.repeat(Math.ceil(n / 3)).slice(0, n);
      for (const [line, at] of [['machine example.com login alice password ', 'password'], ['machine example.com login alice password ', 'alice'], ['login deploy password ', 'password']]) {
        const head = `${filler.slice(0, 2500)}\r\n${line}`;
        const text = `${head}${value}\r\n${filler}`;
        const cut = head.lastIndexOf(at);
        const got = out(text, [cut]);
        expect(got, `${n} cut before ${at}`).toBe(out(text, everyJoined(text.length)));
        expect(got, `${n} cut before ${at}`).toContain(`${line}[redacted]`);
      }
    }
  });

  it('masks every corpus case wherever it stands from the push start, as joined pushes do', () => {
    const r = seeded(5);
    const filler = OUTPUT_KINDS.map((k, n) => k.make(seeded(300 + n), 8 * 1024));
    let compared = 0;
    for (const c of corpus.cases) {
      // A few offsets per case (all of them for some), on a different kind of output each time.
      const offsets = c.kind === 'secret' && r.int(8) === 0 ? OFFSETS : [r.pick(OFFSETS), r.pick(OFFSETS)];
      for (const offset of offsets) {
        const before = r.pick(filler).slice(0, 1500 + r.int(500));
        const after = r.pick(filler).slice(0, 2500);
        // Short lines end the case: some rules need a line end to decide.
        const text = `${before}\r\n${c.text}\r\n${after}`;
        const start = before.length + 2;
        const cut = Math.max(1, start - offset);
        const got = out(text, [cut]);
        const want = out(text, everyJoined(text.length));
        if (got !== want) expect.fail(`${c.id} at ${offset} from the push start: ${JSON.stringify(got.slice(start - 20, start + c.text.length + 20))} != ${JSON.stringify(want.slice(start - 20, start + c.text.length + 20))}`);
        if (c.kind === 'secret') expect(leaked(c, got), c.id).toBeNull();
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(corpus.cases.length * 2);
  }, 120_000);
});

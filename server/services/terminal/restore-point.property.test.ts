import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { PacedTerminal } from './paced-terminal';
import { referenceReads } from './reference-terminal';
import { run, write } from '../../../common/terminal/stream-arbitraries';

/** Small, so a few hundred lines scroll out of the whole buffer and restore points can go shallow. */
const SIZE = { cols: 20, rows: 6, scrollback: 30 };
const RUN_TIMEOUT_MS = 10_000;
const RUNS = 200;

type Step = { write: string } | { resize: [number, number] } | { read: number };

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `${i}\r\n`).join('');

/** Anything before the restore point (resizes too: the restored terminal takes the size it reports). */
const before: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: write },
      { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 5, max: 30 }), fc.integer({ min: 2, max: 10 })).map(([c, r]): Step[] => [{ resize: [c, r] }]) },
      { weight: 2, arbitrary: fc.constantFrom(0, 3, 30).map((n): Step[] => [{ read: n }]) },
    ),
    { maxLength: 12 },
  )
  // Often the cursor on the top row at the restore point: the most line feeds before the first scroll.
  // Often a full scrollback and the cursor on the top row at the restore point: the most lines to push out.
  .chain((s) =>
    fc
      .oneof({ weight: 1, arbitrary: fc.constantFrom<Step[]>([], [{ write: '\x1b[H' }]) }, { weight: 2, arbitrary: fc.constant<Step[]>([{ write: `${numbered(SIZE.scrollback + SIZE.rows)}\x1b[H` }]) })
      .map((end) => [...s.flat(), ...end]),
  );

/**
 * What a restore replays after the restore point (stored output only: a resize is not stored):
 * often long plain runs, then anything, with reads between.
 */
const runs: fc.Arbitrary<Step[]> = fc
  // Also about as many line feeds as it takes, where a miscount shows.
  .array(fc.oneof({ weight: 1, arbitrary: run }, { weight: 2, arbitrary: fc.integer({ min: SIZE.scrollback, max: SIZE.scrollback + 2 * SIZE.rows + 2 }).map(numbered) }), { maxLength: 3 })
  .map((r) => r.map((text) => ({ write: text })));
const rest: fc.Arbitrary<Step[]> = fc
  .array(fc.oneof({ weight: 6, arbitrary: write }, { weight: 2, arbitrary: fc.constantFrom(0, 3, 30).map((n): Step[] => [{ read: n }]) }), { maxLength: 10 })
  .map((s) => s.flat());

const fired = { runs: 0, shallow: 0 };

describe('PacedTerminal restore points (a lazy read with depthIfScrolledOut)', () => {
  afterAll(() => {
    console.log(`restore point read only the screen in ${fired.shallow} of ${fired.runs} runs`);
  });

  it('a terminal restored from the screen it reads, fed the output after it, ends exactly like one restored from the whole buffer', async () => {
    await fc.assert(
      fc.asyncProperty(
        before,
        runs,
        rest,
        fc.integer({ min: 256, max: 8000 }),
        fc.record({ maxChars: fc.integer({ min: 64, max: 20_000 }), idleMs: fc.constantFrom(1, 30), maxAgeMs: fc.constantFrom(5, 100), maxHoldMs: fc.constantFrom(5, 100, 300) }),
        async (head, plain, more, sliceChars, laziness) => {
          const t = new PacedTerminal(SIZE, { sliceChars, stepMs: 0 }, laziness);
          const feed = (steps: Step[]) => {
            for (const st of steps) {
              if ('write' in st) t.write(st.write);
              else if ('resize' in st) t.resize(...st.resize);
              else void t.after((_term, serialize) => serialize(st.read), { depth: st.read, urgent: false });
            }
          };
          feed(head);
          const point = t.after((term, serialize, scrolledOut) => ({ cols: term.cols, rows: term.rows, scrolledOut, data: serialize(scrolledOut ? 0 : SIZE.scrollback) }), {
            depth: SIZE.scrollback,
            urgent: false,
            depthIfScrolledOut: 0,
          });
          // The point is answered before more output comes, as a control plane stores it: what decides
          // it is output that is already on its way to the store then, and a restore replays at least that.
          feed(plain);
          let timer: NodeJS.Timeout | undefined;
          const hung = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error('a read never came back')), RUN_TIMEOUT_MS)));
          const got = await Promise.race([point, hung]);
          feed(more);
          const lastGot = await Promise.race([t.after((_term, serialize) => serialize(SIZE.scrollback), { depth: SIZE.scrollback }), hung]).finally(() => clearTimeout(timer));
          t.dispose();
          // A full read right after the plain runs: where lines left over from before the point would show.
          const tail: Step[] = [...plain, { read: SIZE.scrollback }, ...more];

          // The reference: a plain terminal fed every byte, and the whole buffer at the restore point.
          const at = (await referenceReads([...head, { read: SIZE.scrollback }], SIZE)).at(-2)!;
          const [, cols, rows] = /^(\d+)x(\d+) /.exec(at)!.map(Number);
          const full = { cols: cols!, rows: rows!, data: at.slice(at.indexOf(' ') + 1) };
          if (!got.scrolledOut) expect(got).toEqual({ ...full, scrolledOut: false });
          expect({ cols: got.cols, rows: got.rows }).toEqual({ cols: full.cols, rows: full.rows });
          // The mirror's own reads after the restore point stay exact whatever it read there.
          expect(lastGot).toBe((await referenceReads([...head, ...tail], SIZE)).at(-1));

          // Restored as screens.ts restores: a terminal of the reported size painted from the data, fed the output after it.
          const size = { ...SIZE, cols: got.cols, rows: got.rows };
          const fromFull = await referenceReads(tail, size, full.data);
          const fromPoint = await referenceReads(tail, size, got.data);
          fired.runs++;
          if (got.scrolledOut) fired.shallow++;
          expect(fromPoint).toEqual(fromFull);
        },
      ),
      { numRuns: RUNS, endOnFailure: !!process.env.END_ON_FAILURE },
    );
    // The generator must really reach the shallow read, or the property says nothing about it.
    expect(fired.shallow).toBeGreaterThan(RUNS / 5);
  }, 300_000);
});

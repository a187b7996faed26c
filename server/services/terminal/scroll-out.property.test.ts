import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { PacedTerminal } from './paced-terminal';
import { referenceReads } from './reference-terminal';
import { write } from '../../../common/terminal/stream-arbitraries';

/** Small, so a few hundred lines scroll out of the whole buffer and the shortcut can fire. */
const SIZE = { cols: 20, rows: 6, scrollback: 30 };
/** One run parses a few tens of KB: far below this unless something hangs. */
const RUN_TIMEOUT_MS = 10_000;
const RUNS = 300;

type Step = { write: string } | { resize: [number, number] } | { read: number; urgent: boolean };

const steps: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: write },
      { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 5, max: 30 }), fc.integer({ min: 2, max: 10 })).map(([c, r]): Step[] => [{ resize: [c, r] }]) },
      { weight: 3, arbitrary: fc.tuple(fc.constantFrom(0, 1, 3, 10, 30, 100), fc.boolean()).map(([n, urgent]): Step[] => [{ read: n, urgent }]) },
    ),
    { minLength: 1, maxLength: 25 },
  )
  .map((s) => s.flat());

const reference = (steps: Step[]) => referenceReads(steps, SIZE);

const fired = { runs: 0, withSkip: 0, skipped: 0, total: 0 };

describe('PacedTerminal, lazy, with the scroll-out shortcut', () => {
  afterAll(() => {
    console.log(`scroll-out shortcut fired in ${fired.withSkip} of ${fired.runs} runs, skipping ${fired.skipped} of ${fired.total} characters`);
  });

  it('serialises every read, lazy or urgent, exactly like a plain terminal fed every byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        steps,
        // Not tiny: each slice costs xterm a timer turn, and these streams run to tens of KB.
        fc.integer({ min: 256, max: 8000 }),
        fc.constantFrom(0, 1),
        fc.record({ maxChars: fc.integer({ min: 64, max: 20_000 }), idleMs: fc.constantFrom(1, 30), maxAgeMs: fc.constantFrom(5, 100), maxHoldMs: fc.constantFrom(5, 100, 300) }),
        async (all, sliceChars, stepMs, laziness) => {
          const t = new PacedTerminal(SIZE, { sliceChars, stepMs }, laziness);
          const reads: Promise<string>[] = [];
          for (const st of all) {
            if ('write' in st) t.write(st.write);
            else if ('resize' in st) t.resize(...st.resize);
            else reads.push(t.after((term, serialize) => `${term.cols}x${term.rows} ${serialize(st.read)}`, { depth: st.read, urgent: st.urgent }));
          }
          reads.push(t.after((_term, serialize) => serialize(SIZE.scrollback), { depth: SIZE.scrollback }));
          // A read that never comes back is a failure with a counterexample, not a test timeout.
          let timer: NodeJS.Timeout | undefined;
          const hung = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error('a read never came back')), RUN_TIMEOUT_MS)));
          const got = await Promise.race([Promise.all(reads), hung]).finally(() => clearTimeout(timer));
          fired.runs++;
          fired.total += all.reduce((n, st) => n + ('write' in st ? st.write.length : 0), 0);
          fired.skipped += t.skippedChars;
          if (t.skippedChars > 0) fired.withSkip++;
          t.dispose();
          expect(got).toEqual(await reference(all));
        },
      ),
      { numRuns: RUNS, endOnFailure: !!process.env.END_ON_FAILURE },
    );
    // The generator must really reach the shortcut, or the property says nothing about it.
    expect(fired.withSkip).toBeGreaterThan(RUNS / 5);
  }, 300_000);
});

import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { longRun, token } from '../../common/terminal/stream-arbitraries';
import { bufferLines, Screen, SCREEN_SCROLLBACK_LINES, screenTerminal } from './screen';

/** Few rows, so that floods of a few hundred lines scroll the whole buffer (200 lines of scrollback) out. */
const COLS = 20;
const ROWS = 6;
const RUNS = 200;
const RUN_TIMEOUT_MS = 20_000;

type Step = { write: string } | { resize: [number, number] } | 'read';

/** Output cut into writes at arbitrary places (inside escape sequences and surrogate pairs too). */
const output: fc.Arbitrary<Step[]> = fc
  .tuple(
    // Floods long enough for this buffer, among everything that must stop a cut.
    fc.array(fc.oneof({ weight: 1, arbitrary: longRun(Math.ceil((SCREEN_SCROLLBACK_LINES + 2 * ROWS) / 60)) }, { weight: 3, arbitrary: token }), { minLength: 1, maxLength: 8 }),
    fc.array(fc.nat(), { maxLength: 6 }),
  )
  .map(([tokens, cuts]) => {
    const text = tokens.join('');
    const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
    return [0, ...at].map((from, i) => ({ write: text.slice(from, at[i] ?? text.length) })).filter((w) => w.write.length > 0);
  });

const steps: fc.Arbitrary<Step[]> = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: output },
      { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 5, max: 30 }), fc.integer({ min: 2, max: 10 })).map(([c, r]): Step[] => [{ resize: [c, r] }]) },
      { weight: 3, arbitrary: fc.constant<Step[]>(['read']) },
    ),
    { minLength: 1, maxLength: 20 },
  )
  .map((s) => [...s.flat(), 'read' as const]);

/** What today's watch read: a plain terminal given every byte, each resize once what came before is parsed. */
async function referenceReads(all: readonly Step[]): Promise<string[][]> {
  const term = screenTerminal(COLS, ROWS);
  const parsed = () => new Promise<void>((r) => term.write('', r));
  const reads: string[][] = [];
  for (const st of all) {
    if (st === 'read') {
      await parsed();
      const top = term.buffer.active.viewportY;
      reads.push(bufferLines(term, top, top + term.rows), bufferLines(term, 0, term.buffer.active.length));
    } else if ('write' in st) term.write(st.write);
    else {
      await parsed();
      term.resize(...st.resize);
    }
  }
  term.dispose();
  return reads;
}

async function lazyReads(all: readonly Step[], maxQueuedChars: number): Promise<{ reads: string[][]; skipped: number }> {
  const screen = new Screen(COLS, ROWS, maxQueuedChars);
  const reads: string[][] = [];
  for (const st of all) {
    if (st === 'read') {
      await screen.settled();
      reads.push(screen.visibleLines(), screen.allLines());
    } else if ('write' in st) screen.write(st.write);
    else screen.resize(...st.resize);
  }
  const skipped = screen.skippedChars;
  screen.dispose();
  return { reads, skipped };
}

const fired = { runs: 0, withSkip: 0, skipped: 0, total: 0 };

describe('Screen, lazy, with the scroll-out shortcut', () => {
  afterAll(() => {
    console.log(`scroll-out shortcut fired in ${fired.withSkip} of ${fired.runs} runs, skipping ${fired.skipped} of ${fired.total} characters`);
  });

  it('shows the same visible screen and scrollback at every read as a plain terminal fed every byte', async () => {
    await fc.assert(
      fc.asyncProperty(steps, fc.integer({ min: 64, max: 60_000 }), async (all, maxQueuedChars) => {
        // A read that never comes back is a failure with a counterexample, not a test timeout.
        let timer: NodeJS.Timeout | undefined;
        const hung = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error('a read never came back')), RUN_TIMEOUT_MS)));
        const got = await Promise.race([lazyReads(all, maxQueuedChars), hung]).finally(() => clearTimeout(timer));
        fired.runs++;
        fired.total += all.reduce((n, st) => n + (typeof st === 'object' && 'write' in st ? st.write.length : 0), 0);
        fired.skipped += got.skipped;
        if (got.skipped > 0) fired.withSkip++;
        expect(got.reads).toEqual(await referenceReads(all));
      }),
      { numRuns: RUNS, endOnFailure: !!process.env.END_ON_FAILURE },
    );
    // The generator must really reach the shortcut, or the property says nothing about it.
    expect(fired.withSkip).toBeGreaterThan(RUNS / 5);
  }, 600_000);

  it('answers a read cut short by dispose instead of hanging', async () => {
    const screen = new Screen(COLS, ROWS);
    screen.write('x\r\n'.repeat(5000));
    const read = screen.settled();
    screen.dispose();
    await expect(read).resolves.toBeUndefined();
  });
});

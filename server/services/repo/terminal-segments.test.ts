import { describe, expect, it } from 'vitest';
import type { Tx } from './session-events';
import { addOutput, cutSegments, foldsRun, NO_RUN, runAfter, type NewSegment, type OpenRun, type OutputChunk } from './terminal-segments';

const chunks = (from: number, lengths: number[]): OutputChunk[] => lengths.map((n, i) => ({ seq: from + i, ts: 1000 + from + i, chars: n, data: 'x'.repeat(n) }));
const seqs = (list: OutputChunk[]) => list.map((c) => c.seq);

describe('cutSegments: output cut into segments closed at the limit', () => {
  it('closes a segment once it reaches the limit (a chunk is never split); the last may be short', () => {
    expect(cutSegments(chunks(1, [5, 10, 90, 40, 70, 1]), 100).map(seqs)).toEqual([[1, 2, 3], [4, 5], [6]]);
    expect(cutSegments(chunks(1, [150, 0, 3]), 100).map(seqs)).toEqual([[1], [2, 3]]);
  });

  it('empty chunks (all held by the redactor) keep their seq in a segment', () => {
    expect(cutSegments(chunks(2, [0, 0]), 100).map(seqs)).toEqual([[2, 3]]);
  });
});

describe('the open run: rows added until a segment is due, then folded', () => {
  it('a batch is one more row while the run stays short of the limit and of the row cap', () => {
    const run = { seqFrom: 1, chars: 60, rows: 3 };
    expect(foldsRun(run, 39, 100, 4)).toBe(false);
    expect(foldsRun(run, 40, 100, 4)).toBe(true); // reaches a segment's worth
    expect(foldsRun({ ...run, rows: 4 }, 1, 100, 4)).toBe(true); // too many rows for replays to read
    expect(foldsRun(NO_RUN, 1, 100, 4)).toBe(false);
  });

  it('after a fold, a short last segment is the new run; a full one leaves none', () => {
    expect(runAfter(cutSegments(chunks(1, [60, 50, 30]), 100), 100)).toEqual({ seqFrom: 3, chars: 30, rows: 1, chunks: chunks(3, [30]) });
    expect(runAfter(cutSegments(chunks(1, [60, 50]), 100), 100)).toEqual(NO_RUN);
    expect(runAfter([], 100)).toEqual(NO_RUN);
  });

  it('half a segment or more closes a segment: a flood\'s batch is written once, never opened as a run and written again', () => {
    expect(runAfter(cutSegments(chunks(1, [60, 50, 50]), 100), 100)).toEqual(NO_RUN);
    expect(runAfter(cutSegments(chunks(1, [49]), 100), 100)).toEqual({ seqFrom: 1, chars: 49, rows: 1, chunks: chunks(1, [49]) });
    // A batch that alone closes a segment folds the short run before it now.
    expect(foldsRun({ seqFrom: 1, chars: 10, rows: 1 }, 50, 100, 4)).toBe(true);
    expect(foldsRun({ seqFrom: 1, chars: 10, rows: 1 }, 49, 100, 4)).toBe(false);
  });
});

describe('addOutput: a fold reads the open run back only when the writer does not hold it', () => {
  /** A transaction that records its statements and answers reads with the run's stored rows. */
  function recordingTx(stored: Array<{ chunks: string; data: string }>) {
    const sql: string[] = [];
    const tx: Tx = {
      $queryRawUnsafe: async <T>(q: string) => {
        sql.push(q.split(' ')[0]!);
        return stored as T;
      },
      $executeRawUnsafe: async (q: string) => {
        sql.push(q.split(' ')[0]!);
        return 1;
      },
    };
    return { tx, sql };
  }
  const fold = async (run: OpenRun, stored: Array<{ chunks: string; data: string }>) => {
    const { tx, sql } = recordingTx(stored);
    const out: NewSegment[] = [];
    const after = await addOutput(tx, 'sess_x', run, chunks(4, [50]), out, 100, 64);
    return { sql, segments: out.map((s) => seqs(s.chunks)), after };
  };

  it('a run this writer wrote is folded from memory: its rows are deleted, nothing is read', async () => {
    // Cut from a fold (one short segment), then one more row added.
    const cut = runAfter(cutSegments(chunks(1, [100, 20]), 100), 100);
    const { tx } = recordingTx([]);
    const grown = await addOutput(tx, 'sess_x', cut, chunks(3, [30]), [], 100, 64);
    expect(grown).toEqual({ seqFrom: 2, chars: 50, rows: 2, chunks: chunks(2, [20, 30]) });
    expect(await fold(grown, [])).toEqual({ sql: ['DELETE'], segments: [[2, 3, 4]], after: NO_RUN });
  });

  it('a run read from the database (no chunks) is read back, then deleted', async () => {
    const stored = [{ chunks: '[[2,1002,20],[3,1003,30]]', data: 'x'.repeat(50) }];
    expect(await fold({ seqFrom: 2, chars: 50, rows: 2 }, stored)).toEqual({ sql: ['SELECT', 'DELETE'], segments: [[2, 3, 4]], after: NO_RUN });
  });
});

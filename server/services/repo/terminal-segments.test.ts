import { describe, expect, it } from 'vitest';
import { cutSegments, foldsRun, NO_RUN, runAfter, type OutputChunk } from './terminal-segments';

const chunks = (from: number, lengths: number[]): OutputChunk[] => lengths.map((n, i) => ({ seq: from + i, ts: 1000 + from + i, data: 'x'.repeat(n) }));
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
    expect(runAfter(cutSegments(chunks(1, [60, 50, 30]), 100), 100)).toEqual({ seqFrom: 3, chars: 30, rows: 1 });
    expect(runAfter(cutSegments(chunks(1, [60, 50]), 100), 100)).toEqual(NO_RUN);
    expect(runAfter([], 100)).toEqual(NO_RUN);
  });
});

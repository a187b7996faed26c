import { describe, expect, it } from 'vitest';
import { planSegments, type OutputChunk } from './terminal-segments';

const chunks = (from: number, lengths: number[]): OutputChunk[] => lengths.map((n, i) => ({ seq: from + i, ts: 1000 + from + i, data: 'x'.repeat(n) }));
const seqs = (list: OutputChunk[]) => list.map((c) => c.seq);

describe('planSegments: a batch of output into the open segment and new ones', () => {
  it('fills the open segment up to the limit, then starts new segments closed at the limit', () => {
    const plan = planSegments('s', { seqFrom: 1, seqTo: 4, chars: 90 }, chunks(5, [5, 10, 60, 40, 70, 1]), 100);
    // 90 + 5 = 95 < 100: the next chunk still goes in (a chunk is never split), then it is full.
    expect(plan.append).toEqual({ seqFrom: 1, chunks: chunks(5, [5, 10]) });
    expect(plan.fresh.map(seqs)).toEqual([[7, 8], [9, 10]]);
  });

  it('a full open segment, or none, gets no append', () => {
    expect(planSegments('s', { seqFrom: 1, seqTo: 4, chars: 100 }, chunks(5, [1]), 100)).toEqual({ sessionId: 's', append: null, fresh: [chunks(5, [1])] });
    expect(planSegments('s', null, chunks(1, [150, 0, 3]), 100).fresh.map(seqs)).toEqual([[1], [2, 3]]);
  });

  it('empty chunks (all held by the redactor) keep their seq in the segment', () => {
    const plan = planSegments('s', { seqFrom: 1, seqTo: 1, chars: 0 }, chunks(2, [0, 0]), 100);
    expect(plan.append?.chunks.map((c) => c.seq)).toEqual([2, 3]);
    expect(plan.fresh).toEqual([]);
  });
});

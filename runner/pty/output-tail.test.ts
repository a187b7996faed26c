import { describe, expect, it } from 'vitest';
import { OutputTail } from './output-tail';

describe('OutputTail', () => {
  it('is always exactly the last `keep` characters, whatever the pieces', () => {
    for (const [keep, piece] of [
      [10, 3],
      [10, 10],
      [10, 25],
      [1000, 97],
    ]) {
      const tail = new OutputTail(keep);
      let all = '';
      for (let i = 0; i < 200; i++) {
        const data = String(i).padStart(piece, '.').slice(-piece);
        tail.append(data);
        all += data;
        expect(tail.value).toBe(all.slice(-keep));
      }
    }
    expect(new OutputTail(5).value).toBe('');
  });
});

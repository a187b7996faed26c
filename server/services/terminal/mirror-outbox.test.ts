import { describe, expect, it } from 'vitest';
import { Outbox } from './mirror-outbox';

describe('Outbox', () => {
  it('holds requests and posts them once, in order, as one batch', async () => {
    const posted: string[][] = [];
    const sent = new Promise<void>((resolve) => {
      const box = new Outbox<string>((b) => {
        posted.push(b);
        resolve();
      });
      box.push('a', 10);
      box.push('b', 10);
      box.push('c');
      expect(posted).toEqual([]);
    });
    await sent;
    expect(posted).toEqual([['a', 'b', 'c']]);
  });

  it('posts at once, with everything before it, when someone waits for the answer', () => {
    const posted: string[][] = [];
    const box = new Outbox<string>((b) => posted.push(b));
    box.push('write', 5);
    box.push('read', 0, true);
    expect(posted).toEqual([['write', 'read']]);
    box.push('later', 5);
    box.clear();
    box.flush();
    expect(posted).toEqual([['write', 'read']]);
  });

  it('posts at once past its size bound, so a flood never piles up here', () => {
    const posted: string[][] = [];
    const box = new Outbox<string>((b) => posted.push(b), { holdMs: 60_000, maxChars: 100 });
    box.push('x', 60);
    expect(posted).toEqual([]);
    box.push('y', 60);
    expect(posted).toEqual([['x', 'y']]);
    box.clear();
  });
});

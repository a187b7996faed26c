import { describe, expect, it } from 'vitest';
import type { TimelineMark } from '../../protocol';
import { arrived, follow, MAX_ROUTE, NO_WALK, roomSteps, target, type ReplayWalk } from './replay-walk';

const S = 'sess_walker1';
const marks: TimelineMark[] = [
  { seq: 3, ts: 100, kind: 'file', label: 'a', room: 'src/core' },
  { seq: 4, ts: 150, kind: 'approval', label: 'merge' },
  { seq: 5, ts: 200, kind: 'file', label: 'b', room: 'src/api' },
  { seq: 7, ts: 300, kind: 'file', label: 'c', room: 'docs' },
  { seq: 9, ts: 400, kind: 'file', label: 'd', room: 'docs' },
];
const steps = roomSteps(marks);

/** Plays the village: the sprite reaches whatever room it is sent to, until it stands still. */
function walkAll(w: ReplayWalk): { w: ReplayWalk; visited: string[] } {
  const visited: string[] = [];
  for (let room = target(w); room !== null && w.at[S] !== room; room = target(w)) {
    visited.push(room);
    w = arrived(w, S, room);
  }
  return { w, visited };
}

describe('the replayed sprite walks through the rooms the replay passes', () => {
  it('a seek forward walks every room in between, in order, one at a time', () => {
    let w = follow(NO_WALK, { sessionId: S, ts: 50 }, steps);
    expect(target(w)).toBeNull(); // before the first touch: where the live session says
    w = follow(w, { sessionId: S, ts: 450 }, steps);
    expect(target(w)).toBe('src/core'); // not 'docs' at once
    expect(walkAll(w).visited).toEqual(['src/core', 'src/api', 'docs']);
  });

  it('sends the sprite on only when it arrived (not while it walks)', () => {
    let w = follow(follow(NO_WALK, { sessionId: S, ts: 50 }, steps), { sessionId: S, ts: 450 }, steps);
    w = arrived(w, S, 'somewhere/else');
    expect(target(w)).toBe('src/core');
    w = arrived(w, S, 'src/core');
    expect(target(w)).toBe('src/api');
  });

  it('a sprite already in the next room goes straight on; back in time is one walk', () => {
    let w = arrived(NO_WALK, S, 'src/core');
    w = follow(follow(w, { sessionId: S, ts: 50 }, steps), { sessionId: S, ts: 250 }, steps);
    expect(target(w)).toBe('src/api');
    w = walkAll(follow(w, { sessionId: S, ts: 450 }, steps)).w;
    expect(target(w)).toBe('docs');
    w = follow(w, { sessionId: S, ts: 120 }, steps);
    expect(walkAll(w).visited).toEqual(['src/core']);
  });

  it('a long seek queues at most MAX_ROUTE rooms; replay over: back to live', () => {
    const many = roomSteps(Array.from({ length: 50 }, (_, i) => ({ seq: i + 1, ts: i + 1, kind: 'file' as const, label: '', room: `r${i}` })));
    let w = follow(follow(NO_WALK, { sessionId: S, ts: 0 }, many), { sessionId: S, ts: 100 }, many);
    expect(w.route.length).toBe(MAX_ROUTE);
    expect(w.route.at(-1)).toBe('r49');
    w = follow(w, null, many);
    expect(target(w)).toBeNull();
  });
});

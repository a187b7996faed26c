import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../../protocol/ui';
import type { RepoTree } from '../../../protocol/world';
import { FIGURE_H_TILES, FIGURE_W_TILES, crowdSlots, layoutVillage, roomByPath, type Point, type VillageLayout } from '../layout';
import { monorepoTree } from '../monorepo';
import { MAX_STEP_MS, actorsChanged, initialSimState, stepActors, type SimState } from './simulation';

const REPO = 'repo_aaaaaa1';

function tree(paths: string[]): RepoTree {
  return { default_branch: 'main', head_sha: 'abcdef1', dirs: paths.map((path) => ({ path, files: 3 })), truncated: false };
}
const LAYOUT = layoutVillage([
  { id: REPO, name: 'app', tree: tree(['src', 'src/core', 'src/core/deep', 'src/ui', 'docs', 'test', 'test/fixtures']) },
]);

function session(id: string, room: string, extra: Partial<SessionSummary> = {}): SessionSummary {
  return {
    id,
    repo_id: REPO,
    runner_id: 'runner_1',
    provider: 'shell',
    kind: 'agent',
    room_path: room,
    title: id,
    state: 'RUNNING',
    reason: '',
    created_by: 'u',
    created_at: '2026-01-01T00:00:00Z',
    last_seq: 0,
    mode: 'write',
    activity: 'working',
    activity_detail: '',
    activity_since: null,
    diff: null,
    tests: null,
    runner_lost: false,
    ...extra,
  };
}

/** Steps until nothing moves (or a safety cap), calling `each` after every step. */
function settle(state: SimState, sessions: SessionSummary[], layout: VillageLayout, dt = 16, each?: (s: SimState) => void): SimState {
  let s = state;
  for (let i = 0; i < 5000; i++) {
    s = stepActors(s, sessions, layout, dt);
    each?.(s);
    if (!s.busy && s.wakeAt === null) return s;
  }
  throw new Error('never settled');
}

/** A point (tile coordinates of the feet) on a wall must be that room's door: walkers never cross walls. */
function assertLegal(layout: VillageLayout, p: Point): void {
  const x = Math.round(p.x);
  const y = Math.round(p.y);
  for (const b of layout.buildings) {
    for (const r of b.rooms) {
      const inside = x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
      const onWall = inside && (x === r.x || x === r.x + r.w - 1 || y === r.y || y === r.y + r.h - 1);
      if (onWall && !(x === r.door.x && y === r.door.y)) throw new Error(`(${p.x}, ${p.y}) is on a wall of room "${r.path}"`);
    }
  }
}

describe('stepActors', () => {
  it('walks a new sprite from the entrance through every door to its slot, and arrives', () => {
    const sessions = [session('sess_a', 'src/core/deep/file.ts')];
    const seen: Point[] = [];
    const end = settle(initialSimState(), sessions, LAYOUT, 5, (s) => seen.push(s.actors.get('sess_a')!.pos));
    const a = end.actors.get('sess_a')!;
    const room = roomByPath(LAYOUT, REPO, 'src/core/deep')!;
    expect(a.roomPath).toBe('src/core/deep');
    expect(a.pos).toEqual(crowdSlots(LAYOUT, room)[0]);
    expect(a.walk).toBeNull();
    expect(a.fade).toBe(1);
    expect(end.busy).toBe(false);
    // It passed through the doors of src, src/core and src/core/deep, and never stood on a wall.
    for (const p of seen) assertLegal(LAYOUT, p);
    for (const path of ['', 'src', 'src/core', 'src/core/deep']) {
      const door = roomByPath(LAYOUT, REPO, path)!.door;
      expect(seen.some((p) => Math.abs(p.x - door.x) < 0.35 && Math.abs(p.y - door.y) < 0.35)).toBe(true);
    }
  });

  it('re-targets mid-walk without jumping and arrives at the new room', () => {
    let s = initialSimState();
    const first = [session('sess_a', 'src/core/deep')];
    for (let i = 0; i < 12; i++) s = stepActors(s, first, LAYOUT, 16);
    const mid = s.actors.get('sess_a')!;
    expect(mid.walk).not.toBeNull();
    const second = [session('sess_a', 'test/fixtures')];
    let prev = mid.pos;
    const end = settle(s, second, LAYOUT, 16, (st) => {
      const a = st.actors.get('sess_a')!;
      // No teleport: one step moves at most speed × dt.
      expect(Math.abs(a.pos.x - prev.x) + Math.abs(a.pos.y - prev.y)).toBeLessThanOrEqual((a.speed * 16) / 1000 + 1e-9);
      assertLegal(LAYOUT, a.pos);
      prev = a.pos;
    });
    const a = end.actors.get('sess_a')!;
    expect(a.roomPath).toBe('test/fixtures');
    expect(a.pos).toEqual(crowdSlots(LAYOUT, roomByPath(LAYOUT, REPO, 'test/fixtures')!)[0]);
  });

  it('is pure: the input state is untouched and the same inputs give the same state', () => {
    const sessions = [session('sess_a', 'src'), session('sess_b', 'docs')];
    const s0 = stepActors(initialSimState(), sessions, LAYOUT, 16);
    const snapshot = JSON.stringify([...s0.actors.values()]);
    const a = stepActors(s0, sessions, LAYOUT, 40);
    const b = stepActors(s0, sessions, LAYOUT, 40);
    expect(JSON.stringify([...s0.actors.values()])).toBe(snapshot);
    expect(JSON.stringify([...a.actors.values()])).toBe(JSON.stringify([...b.actors.values()]));
    // A standing actor keeps its identity (the renderer skips it).
    const still = settle(a, sessions, LAYOUT);
    const again = stepActors(still, sessions, LAYOUT, 16);
    expect(again.actors.get('sess_a')).toBe(still.actors.get('sess_a'));
    expect(again.busy).toBe(false);
  });

  it('clamps long steps (a background tab does not teleport walkers)', () => {
    const s = stepActors(initialSimState(), [session('sess_a', 'src/core/deep')], LAYOUT, 60_000);
    expect(s.time).toBe(MAX_STEP_MS);
  });

  it('a finished session walks out of the door and disappears', () => {
    const sessions = [session('sess_a', 'docs')];
    const inside = settle(initialSimState(), sessions, LAYOUT);
    const seen: Point[] = [];
    const gone = settle(inside, [session('sess_a', 'docs', { state: 'COMPLETED' })], LAYOUT, 5, (s) => {
      const a = s.actors.get('sess_a');
      if (a) seen.push(a.pos);
    });
    expect(gone.actors.has('sess_a')).toBe(false);
    const entrance = LAYOUT.buildings[0]!.entrance;
    expect(seen.some((p) => Math.abs(p.x - entrance.x) + Math.abs(p.y - entrance.y) < 0.35)).toBe(true);
    for (const p of seen) assertLegal(LAYOUT, p);
  });

  it('a failed session lingers with its cross, then leaves; a crowd member takes its slot', () => {
    const room = roomByPath(LAYOUT, REPO, 'docs')!;
    const cap = crowdSlots(LAYOUT, room).length;
    const ids = Array.from({ length: cap + 2 }, (_, i) => `sess_${String(i).padStart(4, '0')}`);
    const sessions = ids.map((id) => session(id, 'docs'));
    const s = settle(initialSimState(), sessions, LAYOUT);
    expect(s.crowds[0]!.hidden).toHaveLength(3);
    const failed = sessions.map((x) => (x.id === ids[0] ? { ...x, state: 'FAILED' as const } : x));
    const end = settle(s, failed, LAYOUT, 50);
    expect(end.actors.has(ids[0]!)).toBe(false);
    expect(end.crowds[0]!.hidden).toHaveLength(2);
    expect(end.crowds[0]!.all).not.toContain(ids[0]);
  });

  it('300 actors in one room: they never overlap, the rest wait on a "+N" badge, nobody is lost', () => {
    const ids = Array.from({ length: 300 }, (_, i) => `sess_${String(i).padStart(4, '0')}`);
    const sessions = ids.map((id) => session(id, 'src/core'));
    const end = settle(initialSimState(), sessions, LAYOUT, 16);
    const room = roomByPath(LAYOUT, REPO, 'src/core')!;
    const slots = crowdSlots(LAYOUT, room);
    const shown = [...end.actors.values()].filter((a) => !a.hidden);
    expect(shown).toHaveLength(slots.length - 1);
    for (let i = 0; i < shown.length; i++) {
      for (let j = i + 1; j < shown.length; j++) {
        const a = shown[i]!.pos;
        const b = shown[j]!.pos;
        const overlap = Math.abs(a.x - b.x) < FIGURE_W_TILES && Math.abs(a.y - b.y) < FIGURE_H_TILES;
        expect(overlap, `${shown[i]!.id} and ${shown[j]!.id} overlap`).toBe(false);
      }
      // Inside the room's walls, not inside a child room.
      const p = shown[i]!.pos;
      expect(p.x > room.x && p.x < room.x + room.w - 1 && p.y > room.y && p.y < room.y + room.h - 1).toBe(true);
    }
    expect(end.crowds).toHaveLength(1);
    const crowd = end.crowds[0]!;
    expect(crowd.all).toHaveLength(300);
    expect(crowd.hidden).toHaveLength(300 - (slots.length - 1));
    expect(crowd.at).toEqual(slots[slots.length - 1]);
    expect(new Set([...shown.map((a) => a.id), ...crowd.hidden]).size).toBe(300);
  });

  it('300 actors in a 2,000-directory repository, every one reaching a room that contains its path', () => {
    const big = monorepoTree(2000);
    const L = layoutVillage([{ id: REPO, name: 'mono', tree: big }]);
    const paths = big.dirs.map((d) => d.path);
    const sessions = Array.from({ length: 300 }, (_, i) => session(`sess_${String(i).padStart(4, '0')}`, `${paths[(i * 37) % paths.length]}/x.ts`));
    const end = settle(initialSimState(), sessions, L, 33);
    const positions = new Map<string, Point>();
    for (const s of sessions) {
      const a = end.actors.get(s.id)!;
      expect(s.room_path === a.roomPath || a.roomPath === '' || s.room_path.startsWith(`${a.roomPath}/`)).toBe(true);
      if (!a.hidden) positions.set(s.id, a.pos);
    }
    const taken = new Set([...positions.values()].map((p) => `${p.x},${p.y}`));
    expect(taken.size).toBe(positions.size); // no two visible sprites on one tile
  });
});

describe('actorsChanged (what livens the village\'s slow animations)', () => {
  it('a new sessions array with nothing new for the village changes nothing; a new state or a new sprite does', () => {
    const sessions = [session('sess_a', 'src/core/x.ts')];
    const still = settle(initialSimState(), sessions, LAYOUT);
    expect(actorsChanged(still, stepActors(still, [...sessions.map((s) => ({ ...s }))], LAYOUT, 0))).toBe(false);
    expect(actorsChanged(still, stepActors(still, [session('sess_a', 'src/core/x.ts', { activity: 'idle' })], LAYOUT, 0))).toBe(true);
    expect(actorsChanged(still, stepActors(still, [...sessions, session('sess_b', 'docs/y.md')], LAYOUT, 0))).toBe(true);
  });
});

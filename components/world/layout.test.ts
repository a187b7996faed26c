import { describe, expect, it } from 'vitest';
import type { RepoTree } from '../../protocol/world';
import {
  bugSpotsFor,
  MAX_CHILDREN,
  MAX_DEPTH,
  MAX_ROOMS_PER_BUILDING,
  layoutVillage,
  roomAt,
  roomByPath,
  roomChain,
  roomFor,
  planWalk,
  routeBetween,
  routeTo,
  spotFor,
  type Point,
  type Rect,
  type RoomLayout,
  type VillageRepoInput,
  FIGURE_H_TILES,
  FIGURE_W_TILES,
  crowdSlots,
  routeToPoint,
  unfoldKey,
} from './layout';
import { monorepoTree } from './monorepo';

function tree(paths: string[], truncated = false): RepoTree {
  return {
    default_branch: 'main',
    head_sha: 'abcdef1',
    dirs: paths.map((path, i) => ({ path, files: (i * 7) % 13 })),
    truncated,
  };
}

const APP = tree([
  '',
  'src',
  'src/components',
  'src/components/buttons',
  'src/components/buttons/icons',
  'src/components/buttons/icons/svg',
  'src/lib',
  'src/server',
  'docs',
  'test',
  'test/fixtures',
  '.github',
  '.github/workflows',
]);
const API = tree(['', 'cmd', 'cmd/api', 'internal', 'internal/db', 'internal/http', 'pkg']);

const REPOS: VillageRepoInput[] = [
  { id: 'repo_aaaaaa1', name: 'web-app', tree: APP },
  { id: 'repo_bbbbbb2', name: 'api', tree: API },
  { id: 'repo_cccccc3', name: 'scanning', tree: null },
  { id: 'repo_dddddd4', name: 'empty', tree: tree([]) },
];

/** A deterministic shuffle (no Math.random in tests either). */
function shuffle<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function bigTree(n: number): RepoTree {
  const paths: string[] = [];
  let i = 0;
  // A wide and deep tree: 30 top-level packages, each with nested folders.
  outer: for (let a = 0; ; a++) {
    for (let b = 0; b < 10; b++) {
      for (let c = 0; c < 10; c++) {
        if (i >= n) break outer;
        paths.push(`pkg${a % 30}/mod${b}/part${c}/deep${a}/deeper`);
        i++;
      }
    }
  }
  return tree(paths);
}

const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const strictlyInside = (c: Rect, p: Rect) => c.x > p.x && c.y > p.y && c.x + c.w < p.x + p.w && c.y + c.h < p.y + p.h;


describe('layoutVillage', () => {
  it('is deterministic: same input twice, and shuffled input, give equal layouts', () => {
    const a = layoutVillage(REPOS);
    const b = layoutVillage(REPOS);
    expect(b).toEqual(a);
    for (let seed = 1; seed < 6; seed++) {
      const shuffled = shuffle(REPOS, seed).map((r) =>
        r.tree ? { ...r, tree: { ...r.tree, dirs: shuffle(r.tree.dirs, seed * 31) } } : r,
      );
      expect(layoutVillage(shuffled)).toEqual(a);
    }
    expect(JSON.parse(JSON.stringify(a))).toEqual(a); // plain data only
  });

  it('sorts buildings by name then id, and draws a tree-less repository as a construction lot', () => {
    const layout = layoutVillage([...REPOS, { id: 'repo_0000000', name: 'api', tree: null }]);
    expect(layout.buildings.map((b) => `${b.name}:${b.repoId}`)).toEqual([
      'api:repo_0000000',
      'api:repo_bbbbbb2',
      'empty:repo_dddddd4',
      'scanning:repo_cccccc3',
      'web-app:repo_aaaaaa1',
    ]);
    const lot = layout.buildings.find((b) => b.repoId === 'repo_cccccc3')!;
    expect(lot.kind).toBe('construction');
    expect(lot.rooms).toHaveLength(1);
    expect(roomFor(layout, 'repo_cccccc3', 'src/x.ts')!.path).toBe('');
    const empty = layout.buildings.find((b) => b.repoId === 'repo_dddddd4')!;
    expect(empty.kind).toBe('building');
    expect(empty.rooms.map((r) => r.path)).toEqual(['']);
  });

  it('uses integer tiles; every child lies strictly inside its parent; siblings never overlap', () => {
    const layout = layoutVillage([...REPOS, { id: 'repo_big0001', name: 'big', tree: bigTree(800) }]);
    for (const b of layout.buildings) {
      const byPath = new Map(b.rooms.map((r) => [r.path, r]));
      for (const r of b.rooms) {
        for (const v of [r.x, r.y, r.w, r.h, r.door.x, r.door.y, r.plate.x, r.plate.w]) expect(Number.isInteger(v)).toBe(true);
        expect(r.w).toBeGreaterThanOrEqual(5);
        expect(r.h).toBeGreaterThanOrEqual(5);
        // door in the bottom wall, not in a corner
        expect(r.door.y).toBe(r.y + r.h - 1);
        expect(r.door.x).toBeGreaterThan(r.x);
        expect(r.door.x).toBeLessThan(r.x + r.w - 1);
        const kids = r.children.map((c) => byPath.get(c)!);
        for (const k of kids) {
          expect(k.parent).toBe(r.path);
          expect(strictlyInside(k, r)).toBe(true);
        }
        for (let i = 0; i < kids.length; i++)
          for (let j = i + 1; j < kids.length; j++) expect(overlaps(kids[i], kids[j])).toBe(false);
        // spots are free floor of this room: inside the walls, not inside a child room
        for (const s of r.spots) {
          expect(s.x).toBeGreaterThan(r.x);
          expect(s.x).toBeLessThan(r.x + r.w - 1);
          expect(s.y).toBeGreaterThan(r.y);
          expect(s.y).toBeLessThan(r.y + r.h - 1);
          if (b.kind === 'building') expect(roomAt(layout, s.x + 0.5, s.y + 0.5)).toBe(r);
        }
        expect(r.spots.length).toBeGreaterThanOrEqual(2);
      }
    }
  });

  it('never overlaps buildings, and keeps them clear of the roads', () => {
    const many: VillageRepoInput[] = Array.from({ length: 23 }, (_, i) => ({
      id: `repo_many${String(i).padStart(4, '0')}`,
      name: `repo-${i}`,
      tree: i % 5 === 4 ? null : bigTree(10 + i * 13),
    }));
    const layout = layoutVillage(many);
    const bs = layout.buildings;
    expect(bs).toHaveLength(23);
    for (let i = 0; i < bs.length; i++) {
      for (let j = i + 1; j < bs.length; j++) expect(overlaps(bs[i], bs[j])).toBe(false);
      for (const road of layout.roads) expect(overlaps(bs[i], road)).toBe(false);
      expect(bs[i].x + bs[i].w).toBeLessThanOrEqual(layout.width);
      expect(bs[i].y + bs[i].h).toBeLessThanOrEqual(layout.height);
      // the entrance sits right under the front door, on a road stub
      expect(bs[i].entrance).toEqual({ x: bs[i].rooms[0].door.x, y: bs[i].y + bs[i].h });
      expect(layout.roads.some((r) => overlaps(r, { ...bs[i].entrance, w: 1, h: 1 }))).toBe(true);
    }
  });

  it('roomFor maps files and deep paths to the deepest drawn ancestor', () => {
    const layout = layoutVillage(REPOS);
    const id = 'repo_aaaaaa1';
    expect(roomFor(layout, id, '')!.path).toBe('');
    expect(roomFor(layout, id, '')!.name).toBe('web-app');
    expect(roomFor(layout, id, 'src')!.path).toBe('src');
    expect(roomFor(layout, id, 'src/lib/util.ts')!.path).toBe('src/lib');
    expect(roomFor(layout, id, './src/lib/')!.path).toBe('src/lib');
    expect(roomFor(layout, id, 'README.md')!.path).toBe('');
    expect(roomFor(layout, id, 'nope/deeper/x')!.path).toBe('');
    // depth limit: src/components/buttons/icons is depth 4 > MAX_DEPTH
    expect(MAX_DEPTH).toBe(3);
    expect(roomByPath(layout, id, 'src/components/buttons')).not.toBeNull();
    expect(roomByPath(layout, id, 'src/components/buttons/icons')).toBeNull();
    expect(roomFor(layout, id, 'src/components/buttons/icons/svg/a.svg')!.path).toBe('src/components/buttons');
    expect(roomByPath(layout, id, 'src/components/buttons')!.more).toBe(1);
    expect(roomFor(layout, 'repo_unknown', 'src')).toBeNull();
  });

  it('roomAt finds the deepest room under a point, null on the grass', () => {
    const layout = layoutVillage(REPOS);
    const lib = roomByPath(layout, 'repo_aaaaaa1', 'src/lib')!;
    expect(roomAt(layout, lib.x + 1.5, lib.y + 1.5)).toBe(lib);
    const src = roomByPath(layout, 'repo_aaaaaa1', 'src')!;
    expect(roomAt(layout, src.x + 0.5, src.y + 0.5)).toBe(src); // its wall
    expect(roomAt(layout, 0.5, 0.5)).toBeNull();
  });

  it('collapses big trees: bounded rooms per building, per room and in depth', () => {
    const t = bigTree(3000);
    expect(t.dirs).toHaveLength(3000);
    const layout = layoutVillage([{ id: 'repo_huge001', name: 'huge', tree: t }]);
    const b = layout.buildings[0];
    expect(b.totalDirs).toBeGreaterThan(3000); // implicit ancestors included
    expect(b.rooms.length).toBeLessThanOrEqual(MAX_ROOMS_PER_BUILDING);
    expect(b.drawnDirs).toBe(b.rooms.length);
    for (const r of b.rooms) {
      expect(r.depth).toBeLessThanOrEqual(MAX_DEPTH);
      expect(r.children.length).toBeLessThanOrEqual(MAX_CHILDREN);
      if (r.more > 0) expect(r.note?.text).toBe(`+${r.more} more`);
    }
    // reasonably sized: fits a texture and a screen at small zoom
    expect(b.w * 16).toBeLessThan(8192);
    expect(b.h * 16).toBeLessThan(8192);
    // every directory maps to a drawn room that is its own or an ancestor
    for (const d of t.dirs) {
      const r = roomFor(layout, 'repo_huge001', d.path)!;
      expect(d.path === r.path || r.path === '' || d.path.startsWith(`${r.path}/`)).toBe(true);
    }
    // the maximum the schema allows still lays out
    const max = layoutVillage([{ id: 'repo_max0001', name: 'max', tree: bigTree(20000) }]);
    expect(max.buildings[0].rooms.length).toBeLessThanOrEqual(MAX_ROOMS_PER_BUILDING);
  });

  it('spotFor is deterministic and stays near the room spots', () => {
    const layout = layoutVillage(REPOS);
    const r = roomByPath(layout, 'repo_aaaaaa1', 'docs')!;
    expect(spotFor(r, 0)).toEqual(r.spots[0]);
    expect(spotFor(r, 1)).toEqual(r.spots[1]);
    const far = spotFor(r, r.spots.length + 1);
    expect(Math.abs(far.x - r.spots[1].x)).toBeLessThan(1);
    expect(spotFor(r, 7)).toEqual(spotFor(r, 7));
  });

  it('routes walk from the entrance through doors and corridors only, never through a wall', () => {
    const layout = layoutVillage([...REPOS, { id: 'repo_big0001', name: 'big', tree: bigTree(400) }]);
    const problems: string[] = [];
    const tilesOf = (route: Point[]): Point[] => {
      const out: Point[] = [];
      for (let i = 0; i + 1 < route.length; i++) {
        const a = route[i];
        const b = route[i + 1];
        if (a.x !== b.x && a.y !== b.y) problems.push(`diagonal ${JSON.stringify([a, b])}`);
        const n = Math.max(Math.abs(b.x - a.x), Math.abs(b.y - a.y));
        for (let s = 0; s <= n; s++) out.push({ x: a.x + ((b.x - a.x) * s) / Math.max(1, n), y: a.y + ((b.y - a.y) * s) / Math.max(1, n) });
      }
      return out;
    };
    const checkTile = (p: Point, allowed: Set<RoomLayout>, what: string) => {
      const r = roomAt(layout, p.x + 0.5, p.y + 0.5);
      if (!r) return; // outside: the entrance
      if (!allowed.has(r)) problems.push(`${what}: (${p.x},${p.y}) is in ${r.path}`);
      if (layout.buildings.find((b) => b.repoId === r.repoId)!.kind !== 'building') return;
      const onWall = p.x === r.x || p.y === r.y || p.x === r.x + r.w - 1 || p.y === r.y + r.h - 1;
      const isDoor = p.x === r.door.x && p.y === r.door.y;
      if (onWall && !isDoor) problems.push(`${what}: (${p.x},${p.y}) is a wall of ${r.path}`);
    };
    let checked = 0;
    for (const b of layout.buildings) {
      for (const room of b.rooms) {
        for (let spot = 0; spot < 3; spot++) {
          const route = routeTo(layout, room, spot);
          expect(route[0]).toEqual(b.entrance);
          expect(route[route.length - 1]).toEqual(spotFor(room, spot));
          const allowed = new Set(roomChain(layout, room));
          for (const p of tilesOf(route)) checkTile(p, allowed, `${b.name}/${room.path}#${spot}`);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);

    // Walking between two rooms goes back to where the routes part and never crosses a wall either.
    const web = layout.buildings.find((b) => b.repoId === 'repo_aaaaaa1')!;
    const a = roomByPath(layout, web.repoId, 'src/components/buttons')!;
    const c = roomByPath(layout, web.repoId, 'test/fixtures')!;
    const between = routeBetween(routeTo(layout, a, 0), routeTo(layout, c, 1));
    expect(between[0]).toEqual(spotFor(a, 0));
    expect(between[between.length - 1]).toEqual(spotFor(c, 1));
    const allowed = new Set([...roomChain(layout, a), ...roomChain(layout, c)]);
    for (const p of tilesOf(between)) checkTile(p, allowed, 'between');
    expect(problems).toEqual([]);
  });

  it('planWalk can re-plan from the middle of a walk', () => {
    const layout = layoutVillage(REPOS);
    const id = 'repo_aaaaaa1';
    const a = roomByPath(layout, id, 'src/components/buttons')!;
    const b = roomByPath(layout, id, 'docs')!;
    const c = roomByPath(layout, id, 'src/lib')!;
    const first = planWalk(routeTo(layout, a, 0), routeTo(layout, b, 0));
    // Every waypoint's base is a route prefix from the entrance ending next to that waypoint.
    for (let i = 0; i < first.points.length; i++) {
      const base = first.bases[i];
      expect(base[0]).toEqual(layout.buildings.find((x) => x.repoId === id)!.entrance);
      const last = base[base.length - 1];
      const p = first.points[i];
      expect(last.x === p.x || last.y === p.y).toBe(true); // one straight segment away
    }
    // Halfway, turn around towards src/lib: the new walk starts where we are and ends at the spot.
    const mid = Math.floor(first.points.length / 2);
    const here = first.points[mid - 1] ?? routeTo(layout, a, 0).at(-1)!;
    const again = planWalk([...first.bases[mid], here], routeTo(layout, c, 2));
    expect(again.points[again.points.length - 1]).toEqual(spotFor(c, 2));
    // From the entrance it is simply the route.
    const entrance = layout.buildings.find((x) => x.repoId === id)!.entrance;
    expect(planWalk([entrance], routeTo(layout, c, 0)).points).toEqual(routeTo(layout, c, 0).slice(1));
  });
});

describe('bugSpotsFor (where alert bugs sit)', () => {
  const L = layoutVillage([{ id: 'repo_demo01', name: 'demo', tree: tree(['', 'src', 'src/core', 'tests', 'tests/core', 'docs']) }]);
  const inside = (p: Point, r: Rect) => p.x >= r.x && p.x < r.x + r.w && p.y >= r.y && p.y < r.y + r.h;

  it('puts bugs on the room’s own floor: inside its walls, never in a child room, on a sprite spot or in the door column', () => {
    for (const room of L.buildings[0]!.rooms) {
      const spots = bugSpotsFor(L, room, 4);
      expect(spots).toHaveLength(4);
      const kids = room.children.map((c) => roomByPath(L, room.repoId, c)!);
      for (const p of spots.slice(0, 2)) {
        expect(inside(p, { x: room.x + 1, y: room.y + 1, w: room.w - 2, h: room.h - 2 })).toBe(true);
        expect(kids.some((k) => inside(p, k))).toBe(false);
        expect(room.spots.some((s) => s.x === p.x && s.y === p.y)).toBe(false);
        expect(p.x).not.toBe(room.door.x);
        expect(roomAt(L, p.x + 0.5, p.y + 0.5)).toBe(room);
      }
    }
  });

  it('is deterministic, and the first bugs do not touch each other', () => {
    const room = roomByPath(L, 'repo_demo01', 'tests/core')!;
    expect(bugSpotsFor(L, room, 3)).toEqual(bugSpotsFor(L, room, 3));
    const [a, b] = bugSpotsFor(L, room, 2);
    expect(Math.abs(a!.x - b!.x) + Math.abs(a!.y - b!.y)).toBeGreaterThanOrEqual(2);
    expect(bugSpotsFor(L, room, 0)).toEqual([]);
  });
});

describe('big repositories (issue 20)', () => {
  const mono = () => monorepoTree(2000);

  it('lays out 2,000 directories deterministically, whatever order they arrive in', () => {
    const t = mono();
    expect(t.dirs).toHaveLength(2000);
    const a = layoutVillage([{ id: 'repo_mono0001', name: 'mono', tree: t }]);
    const b = layoutVillage([{ id: 'repo_mono0001', name: 'mono', tree: { ...t, dirs: shuffle(t.dirs, 7) } }]);
    expect(b).toEqual(a);
    expect(a.buildings[0]!.rooms.length).toBeLessThanOrEqual(MAX_ROOMS_PER_BUILDING);
  });

  it('folding keeps every FILE_TOUCHED room reachable: the nearest drawn ancestor, through doors', () => {
    const t = mono();
    const L = layoutVillage([{ id: 'repo_mono0001', name: 'mono', tree: t }]);
    const b = L.buildings[0]!;
    let folded = 0;
    for (const d of t.dirs) {
      const r = roomFor(L, 'repo_mono0001', `${d.path}/file.ts`)!;
      expect(d.path === r.path || r.path === '' || d.path.startsWith(`${r.path}/`)).toBe(true);
      if (r.path !== d.path) {
        folded++;
        // The nearest visible ancestor: no drawn room between it and the folded directory.
        const below = d.path.slice(r.path === '' ? 0 : r.path.length + 1).split('/')[0]!;
        expect(roomByPath(L, 'repo_mono0001', r.path === '' ? below : `${r.path}/${below}`)).toBeNull();
        expect(r.more).toBeGreaterThan(0); // its "+N more" marker says something is folded here
      }
      const slots = crowdSlots(L, r);
      const route = routeToPoint(L, r, slots[slots.length - 1]!);
      expect(route[0]).toEqual(b.entrance);
      expect(route[route.length - 1]).toEqual(slots[slots.length - 1]);
    }
    expect(folded).toBeGreaterThan(1000);
  });

  it('tiny leaves among many siblings fold; unfolding a room draws its folded children', () => {
    const paths = ['lib', ...Array.from({ length: 12 }, (_, i) => `lib/m${String(i).padStart(2, '0')}`), 'lib/m00/deep'];
    const t: RepoTree = { default_branch: 'main', head_sha: 'abcdef1', dirs: paths.map((p, i) => ({ path: p, files: i === 3 ? 5 : 0 })), truncated: false };
    const L = layoutVillage([{ id: 'repo_tiny001', name: 'tiny', tree: t }]);
    const lib = roomByPath(L, 'repo_tiny001', 'lib')!;
    // m00 has a child and m02 has files: they stay; the other ten tiny leaves fold.
    expect(lib.children).toEqual(['lib/m00', 'lib/m02']);
    expect(lib.more).toBe(10);
    const open = layoutVillage([{ id: 'repo_tiny001', name: 'tiny', tree: t }], null, { unfolded: new Set([unfoldKey('repo_tiny001', 'lib')]) });
    const lib2 = roomByPath(open, 'repo_tiny001', 'lib')!;
    expect(lib2.children).toHaveLength(12);
    expect(lib2.more).toBe(0);
    // Deeper than MAX_DEPTH unfolds too.
    const before = layoutVillage([{ id: 'repo_mono0001', name: 'mono', tree: mono() }]);
    expect(roomByPath(before, 'repo_mono0001', 'packages/core/src')!.more).toBeGreaterThan(0);
    expect(roomByPath(before, 'repo_mono0001', 'packages/core/src/components')).toBeNull();
    const deep = layoutVillage([{ id: 'repo_mono0001', name: 'mono', tree: mono() }], null, {
      unfolded: new Set([unfoldKey('repo_mono0001', 'packages/core/src')]),
    });
    expect(roomByPath(deep, 'repo_mono0001', 'packages/core/src/components')).not.toBeNull();
    expect(roomByPath(deep, 'repo_mono0001', 'packages/core/src')!.more).toBe(0);
  });

  it('10 repositories form a village with streets: no overlaps, every door on a road', () => {
    const repos = Array.from({ length: 10 }, (_, i) => ({ id: `repo_many${String(i).padStart(3, '0')}`, name: `service-${i}`, tree: monorepoTree(40 + i * 60) }));
    const L = layoutVillage(repos);
    const bs = L.buildings;
    expect(bs).toHaveLength(10);
    const overlap = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
    for (let i = 0; i < bs.length; i++) for (let j = i + 1; j < bs.length; j++) expect(overlap(bs[i]!, bs[j]!)).toBe(false);
    for (const b of bs) {
      const onRoad = L.roads.some((r) => b.entrance.x >= r.x && b.entrance.x < r.x + r.w && b.entrance.y >= r.y && b.entrance.y < r.y + r.h);
      const street = L.roads.some((r) => r.h >= 2 && r.y === b.roadY);
      expect(onRoad && street).toBe(true);
    }
    // More than one street: the village is rows along roads, not one long line.
    expect(new Set(bs.map((b) => b.roadY)).size).toBeGreaterThan(1);
  });

  it('crowd slots are free floor, never overlapping, in every room', () => {
    const L = layoutVillage([{ id: 'repo_mono0001', name: 'mono', tree: mono() }]);
    for (const r of L.buildings[0]!.rooms) {
      const slots = crowdSlots(L, r);
      expect(slots.length).toBeGreaterThan(0);
      for (let i = 0; i < slots.length; i++) {
        const p = slots[i]!;
        expect(roomAt(L, p.x + 0.5, p.y + 0.5)).toBe(r);
        for (let j = i + 1; j < slots.length; j++) {
          const q = slots[j]!;
          expect(Math.abs(p.x - q.x) < FIGURE_W_TILES && Math.abs(p.y - q.y) < FIGURE_H_TILES).toBe(false);
        }
      }
    }
  });
});

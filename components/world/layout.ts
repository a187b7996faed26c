/**
 * The village layout: a PURE, deterministic function of the repositories' trees.
 *
 * Same input (in any order) → deeply equal output. No randomness, no clocks, no locale-dependent
 * sorting. Every coordinate is an integer number of tiles (TILE px each); the renderer multiplies.
 *
 * Geometry of a room (walls are one tile thick and belong to the room's rectangle):
 *
 *   x ──────────────── x+w-1
 *   ┌▓[plate]▓▓▓▓▓▓▓▓▓▓▓▓▓┐  y        top wall, carries the name plate
 *   │ lobby (spots)  note │  y+1      ─┐ LOBBY rows (only in rooms with drawn children)
 *   │ · · · · · · · · · · │  y+2      ─┘
 *   │ · ┌────┐ · ┌─────┐  │           children on shelves, one free tile around each of them:
 *   │ · │kid │ · │ kid │  │           the left column and the row under every shelf are corridors
 *   │ · └─╜╙─┘ · └──╜╙─┘  │
 *   │ · · · · · · · · · · │           corridor under the shelf (the children's doors open onto it)
 *   └─────────╜╙──────────┘  y+h-1    bottom wall, door in the middle
 *
 * Sprites walk only along corridors and through doors (see `routeTo`), so they never cross a wall.
 */

import type { RepoTree } from '../../protocol/world';

/** Size of one tile in pixels (at zoom 1). */
export const TILE = 16;
/** Deepest drawn room depth (the building's root room is depth 0): 4 drawn levels. */
export const MAX_DEPTH = 3;
/** At most this many child rooms are drawn per room; the rest are collapsed into "+N more". */
export const MAX_CHILDREN = 24;
/** At most this many rooms are drawn per building (breadth first), so a huge repository still draws. */
export const MAX_ROOMS_PER_BUILDING = 240;
/** A room a person unfolded shows up to this many children (and its children may go one level deeper). */
export const MAX_CHILDREN_UNFOLDED = 96;
/**
 * A leaf directory with at most this many files is "tiny": when its parent has more than
 * TINY_FOLD_SIBLINGS children it folds into the parent (one fewer room that says little).
 */
export const TINY_DIR_FILES = 1;
export const TINY_FOLD_SIBLINGS = 8;

/** Free rows at the top of a room with children: its own floor, where its sprites stand. */
const LOBBY = 2;
const LEAF_MIN_W = 6;
const LEAF_MAX_W = 14;
const LEAF_H = 5;
const CONSTRUCTION_W = 12;
const CONSTRUCTION_H = 8;
/** Free tiles around the village, the vertical road sits in it. */
const MARGIN_X = 6;
const MARGIN_TOP = 3;
const BUILDING_GAP = 3;
const ROW_GAP_ABOVE = 3;
const ROAD_H = 2;

export interface Point {
  x: number;
  y: number;
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface RoomLayout extends Rect {
  repoId: string;
  /** Directory path, '' for the repository root. */
  path: string;
  /** Last path segment; the repository name for the root room. */
  name: string;
  depth: number;
  /** Parent room path, null for the root. */
  parent: string | null;
  /** Drawn child rooms (paths), sorted. */
  children: string[];
  /** Child directories that exist but are not drawn (per-room limit, depth limit or building budget). */
  more: number;
  /** Files directly in this directory (from the scan). */
  files: number;
  /** The door tile, always in the bottom wall. */
  door: Point;
  /** Corridor row in the parent (or the entrance row for the root) that the door opens onto. */
  exitY: number;
  /** Where the name plate sits (on the top wall). */
  plate: Rect;
  /** "+N more" note position, when `more` > 0. */
  note: (Rect & { text: string }) | null;
  /** Free floor tiles where sprites stand (at least 2). */
  spots: Point[];
}

export interface BuildingLayout extends Rect {
  /** The repository's id; WORKSHOP_ID for the workshop. */
  repoId: string;
  name: string;
  /**
   * 'construction': the tree is not known yet (scanning or error); drawn as a lot with a sign.
   * 'workshop': where deterministic agents work (one bench per agent; their runs are the sprites).
   */
  kind: 'building' | 'construction' | 'workshop';
  /** Workshop only: how many deterministic agents (benches) it has. */
  agents?: number;
  /** Tile just outside the front door, where sprites appear and leave. */
  entrance: Point;
  /** Road row in front of the building. */
  roadY: number;
  /** Rooms in pre-order (root first, then depth-first by path). A construction lot has one pseudo room. */
  rooms: RoomLayout[];
  /** Directories of the tree (including the root) and how many of them are drawn. */
  totalDirs: number;
  drawnDirs: number;
}

export interface VillageLayout {
  tile: number;
  /** Village size in tiles (buildings, roads and a grass margin). */
  width: number;
  height: number;
  buildings: BuildingLayout[];
  /** Road rectangles (tiles): one horizontal road per row of buildings, one vertical road joining them, stubs to doors. */
  roads: Rect[];
}

export interface VillageRepoInput {
  id: string;
  name: string;
  tree: RepoTree | null;
}

/** The workshop's id where a repository id would go: runs of deterministic agents stand in it. */
export const WORKSHOP_ID = 'workshop';
export const WORKSHOP_NAME = 'Workshop';
/** The workshop exists when the org has deterministic agents; `agents` sets how many benches it has. */
export interface VillageWorkshopInput {
  agents: number;
}
const WORKSHOP_H = 9;
const WORKSHOP_MIN_W = 12;
const WORKSHOP_MAX_W = 22;

// ───────────────────────────── helpers ─────────────────────────────

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

function baseName(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** Normalises a file or directory path: no leading "./" or "/", no trailing "/", no empty segments. */
export function normalizePath(path: string): string {
  return path
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

/** Tiles needed for a name plate (about 2.2 characters per tile at zoom 1, plus a margin). */
function plateTiles(name: string): number {
  return Math.ceil(Math.min(name.length, 28) / 2.2) + 1;
}

function leafWidth(name: string): number {
  return Math.max(LEAF_MIN_W, Math.min(LEAF_MAX_W, plateTiles(name) + 2));
}

interface DirNode {
  path: string;
  files: number;
  depth: number;
  children: DirNode[];
  subtree: number; // number of directories in the subtree, itself included
}

/** Builds the directory tree (root '' always present, missing ancestors added). */
function buildTree(tree: RepoTree): { root: DirNode; total: number } {
  const files = new Map<string, number>();
  files.set('', 0);
  for (const d of tree.dirs) {
    const p = normalizePath(d.path);
    files.set(p, Math.max(files.get(p) ?? 0, d.files));
    // Make sure every ancestor exists.
    let q = p;
    while (q !== '') {
      q = parentOf(q);
      if (!files.has(q)) files.set(q, 0);
      else if (q !== '') {
        // Ancestors already present: their own ancestors were added when they were inserted.
        break;
      }
    }
  }
  const paths = [...files.keys()].sort(cmp);
  const nodes = new Map<string, DirNode>();
  for (const p of paths) {
    const node: DirNode = {
      path: p,
      files: files.get(p) ?? 0,
      depth: p === '' ? 0 : p.split('/').length,
      children: [],
      subtree: 1,
    };
    nodes.set(p, node);
    if (p !== '') nodes.get(parentOf(p))!.children.push(node); // parents sort before their children
  }
  for (let i = paths.length - 1; i > 0; i--) {
    const n = nodes.get(paths[i])!;
    nodes.get(parentOf(n.path))!.subtree += n.subtree;
  }
  return { root: nodes.get('')!, total: paths.length };
}

interface Drawn {
  node: DirNode;
  kids: Drawn[];
  more: number;
  w: number;
  h: number;
  /** Position relative to the parent's top-left, and the corridor row (relative) under its shelf. */
  rx: number;
  ry: number;
  rExit: number;
}

/**
 * Chooses the drawn rooms breadth first, within the per-room, depth and building limits. Deep
 * directories, tiny leaves among many siblings and whatever exceeds a budget fold into their parent
 * (its "+N more" marker); a room in `unfolded` shows its children regardless (up to
 * MAX_CHILDREN_UNFOLDED, on top of the building budget).
 */
function chooseRooms(root: DirNode, unfolded: ReadonlySet<string>): { top: Drawn; count: number } {
  const top: Drawn = { node: root, kids: [], more: 0, w: 0, h: 0, rx: 0, ry: 0, rExit: 0 };
  let count = 1;
  let extra = 0; // budget granted by unfolded rooms
  const queue: Drawn[] = [top];
  for (let qi = 0; qi < queue.length; qi++) {
    const d = queue[qi];
    const all = d.node.children;
    const open = unfolded.has(d.node.path);
    if ((d.node.depth >= MAX_DEPTH && !open) || all.length === 0) {
      d.more = all.length;
      continue;
    }
    const eligible = open || all.length <= TINY_FOLD_SIBLINGS ? all : all.filter((c) => c.children.length > 0 || c.files > TINY_DIR_FILES);
    let room: number;
    if (open) {
      room = Math.min(MAX_CHILDREN_UNFOLDED, eligible.length);
      extra += room;
    } else {
      room = Math.max(0, Math.min(MAX_CHILDREN, MAX_ROOMS_PER_BUILDING + extra - count, eligible.length));
    }
    // Prefer the biggest subtrees, then draw the chosen ones in path order.
    const chosen =
      room >= eligible.length
        ? eligible
        : [...eligible]
            .sort((a, b) => b.subtree - a.subtree || cmp(a.path, b.path))
            .slice(0, room)
            .sort((a, b) => cmp(a.path, b.path));
    d.more = all.length - chosen.length;
    for (const c of chosen) {
      const kid: Drawn = { node: c, kids: [], more: 0, w: 0, h: 0, rx: 0, ry: 0, rExit: 0 };
      d.kids.push(kid);
      queue.push(kid);
    }
    count += chosen.length;
  }
  return { top, count };
}

function noteText(more: number): string {
  return `+${more} more`;
}

/** Bottom-up sizes and shelf packing of the children (positions relative to the parent). */
function measure(d: Drawn, name: string): void {
  for (const k of d.kids) measure(k, baseName(k.node.path));
  const plate = plateTiles(name) + 2;
  if (d.kids.length === 0) {
    d.w = Math.max(leafWidth(name), d.more > 0 ? 7 : 0);
    d.h = LEAF_H + (d.more > 0 ? 1 : 0);
    return;
  }
  let area = 0;
  let maxW = 0;
  for (const k of d.kids) {
    area += (k.w + 1) * (k.h + 1);
    maxW = Math.max(maxW, k.w);
  }
  // Aim for rooms a bit wider than tall (screens are landscape).
  const target = Math.max(maxW, Math.ceil(Math.sqrt(area * 1.6)));
  let sx = 0; // x within the current shelf
  let sy = 0; // top of the current shelf (relative to the packing area)
  let shelfH = 0;
  let usedW = 0;
  let shelf: Drawn[] = [];
  const closeShelf = () => {
    for (const k of shelf) k.rExit = sy + shelfH;
    sy += shelfH + 1;
    sx = 0;
    shelfH = 0;
    shelf = [];
  };
  for (const k of d.kids) {
    if (sx > 0 && sx + k.w > target) closeShelf();
    k.rx = sx;
    k.ry = sy;
    shelf.push(k);
    sx += k.w + 1;
    shelfH = Math.max(shelfH, k.h);
    usedW = Math.max(usedW, sx - 1);
  }
  closeShelf();
  // Padding: wall + corridor column on the left, corridor + wall on the right.
  const noteW = d.more > 0 ? 7 : 0;
  d.w = Math.max(usedW + 4, plate + noteW + 1, LEAF_MIN_W);
  d.h = 2 + LOBBY + sy;
  const offX = 2;
  const offY = 1 + LOBBY;
  for (const k of d.kids) {
    k.rx += offX;
    k.ry += offY;
    k.rExit += offY;
  }
}

function makeRoom(repoId: string, d: Drawn, name: string, x: number, y: number, parent: string | null, exitY: number): RoomLayout {
  const { w, h } = d;
  const ix = x + 1;
  const iy = y + 1;
  const iw = w - 2;
  const ih = h - 2;
  const hasKids = d.kids.length > 0;
  const spots: Point[] = [];
  if (hasKids) {
    for (let sx = ix + 1; sx < ix + iw - 1 && spots.length < 6; sx += 2) spots.push({ x: sx, y: iy + LOBBY - 1 });
  } else {
    const rows = ih - (d.more > 0 ? 1 : 0); // keep the note row free
    const r0 = Math.max(iy, iy + rows - 2);
    let i = 0;
    for (let sx = ix + 1; sx < ix + iw && spots.length < 6; sx += 2, i++) {
      spots.push({ x: sx, y: i % 2 === 0 ? r0 : Math.min(r0 + 1, iy + rows - 1) });
    }
  }
  if (spots.length === 0) spots.push({ x: ix, y: iy });
  if (spots.length === 1) spots.push({ x: spots[0].x, y: spots[0].y });
  const plateW = Math.max(1, Math.min(plateTiles(name), w - 2));
  let note: RoomLayout['note'] = null;
  if (d.more > 0) {
    const nw = Math.min(6, iw);
    note = hasKids
      ? { x: ix + iw - nw, y: iy, w: nw, h: 1, text: noteText(d.more) }
      : { x: ix + iw - nw, y: iy + ih - 1, w: nw, h: 1, text: noteText(d.more) };
  }
  return {
    repoId,
    path: d.node.path,
    name,
    depth: d.node.depth,
    x,
    y,
    w,
    h,
    parent,
    children: d.kids.map((k) => k.node.path),
    more: d.more,
    files: d.node.files,
    door: { x: x + Math.floor(w / 2), y: y + h - 1 },
    exitY,
    plate: { x: x + 1, y, w: plateW, h: 1 },
    note,
    spots,
  };
}

function placeRooms(repoId: string, top: Drawn, repoName: string, x: number, y: number): RoomLayout[] {
  const out: RoomLayout[] = [];
  const walk = (d: Drawn, ax: number, ay: number, parent: string | null, exitY: number) => {
    const name = d.node.path === '' ? repoName : baseName(d.node.path);
    out.push(makeRoom(repoId, d, name, ax, ay, parent, exitY));
    for (const k of d.kids) walk(k, ax + k.rx, ay + k.ry, d.node.path, ay + k.rExit);
  };
  walk(top, x, y, null, y + top.h);
  return out;
}

interface Pending {
  repoId: string;
  name: string;
  kind: 'building' | 'construction' | 'workshop';
  agents?: number;
  w: number;
  h: number;
  top: Drawn | null;
  total: number;
  drawn: number;
}

function prepare(repo: VillageRepoInput, unfolded: ReadonlySet<string>): Pending {
  if (!repo.tree) {
    return { repoId: repo.id, name: repo.name, kind: 'construction', w: CONSTRUCTION_W, h: CONSTRUCTION_H, top: null, total: 0, drawn: 0 };
  }
  const { root, total } = buildTree(repo.tree);
  const open = new Set<string>();
  const prefix = `${repo.id}|`;
  for (const k of unfolded) if (k.startsWith(prefix)) open.add(k.slice(prefix.length));
  const { top, count } = chooseRooms(root, open);
  measure(top, repo.name);
  return { repoId: repo.id, name: repo.name, kind: 'building', w: top.w, h: top.h, top, total, drawn: count };
}

/** A building that is one bare room (no directory tree): the room, with the given spots. */
function singleRoom(p: Pending, x: number, y: number, spots: Point[]): RoomLayout {
  const { w, h } = p;
  return {
    repoId: p.repoId,
    path: '',
    name: p.name,
    depth: 0,
    x,
    y,
    w,
    h,
    parent: null,
    children: [],
    more: 0,
    files: 0,
    door: { x: x + Math.floor(w / 2), y: y + h - 1 },
    exitY: y + h,
    plate: { x: x + 1, y, w: Math.min(plateTiles(p.name), w - 2), h: 1 },
    note: null,
    spots,
  };
}

function constructionRoom(p: Pending, x: number, y: number): RoomLayout {
  const spots: Point[] = [];
  for (let sx = x + 2; sx < x + p.w - 1 && spots.length < 5; sx += 2) spots.push({ x: sx, y: y + p.h - 3 + (spots.length % 2) });
  return singleRoom(p, x, y, spots);
}

function prepareWorkshop(w: VillageWorkshopInput): Pending {
  const agents = Math.max(0, Math.floor(w.agents));
  // A bench every other tile, walls and a free column at each side.
  const width = Math.max(WORKSHOP_MIN_W, Math.min(WORKSHOP_MAX_W, 2 * agents + 4));
  return { repoId: WORKSHOP_ID, name: WORKSHOP_NAME, kind: 'workshop', agents, w: width, h: WORKSHOP_H, top: null, total: 0, drawn: 0 };
}

/**
 * The workshop's one room: benches along the top wall (row y+1), the workers' spots in front of
 * them (row y+2), a second row of spots further down for crowds.
 */
function workshopRoom(p: Pending, x: number, y: number): RoomLayout {
  const spots: Point[] = [];
  for (let sx = x + 2; sx < x + p.w - 2; sx += 2) spots.push({ x: sx, y: y + 2 });
  for (let sx = x + 3; sx < x + p.w - 2; sx += 2) spots.push({ x: sx, y: y + 4 });
  return singleRoom(p, x, y, spots);
}

/** Splits buildings (in order) into rows no wider than `target` tiles. */
function splitRows(pending: Pending[], target: number): Pending[][] {
  const rows: Pending[][] = [];
  let cur: Pending[] = [];
  let curW = 0;
  for (const p of pending) {
    if (cur.length > 0 && curW + p.w > target) {
      rows.push(cur);
      cur = [];
      curW = 0;
    }
    cur.push(p);
    curW += p.w + BUILDING_GAP;
  }
  if (cur.length > 0) rows.push(cur);
  return rows;
}

function chooseRows(pending: Pending[]): Pending[][] {
  if (pending.length === 0) return [];
  let maxW = 0;
  let totalW = 0;
  for (const p of pending) {
    maxW = Math.max(maxW, p.w);
    totalW += p.w + BUILDING_GAP;
  }
  const step = Math.max(1, Math.floor((totalW - maxW) / 300));
  let best: Pending[][] = [];
  let bestScore = Infinity;
  for (let target = maxW; target <= totalW; target += step) {
    const rows = splitRows(pending, target);
    let w = 0;
    let h = 0;
    for (const row of rows) {
      w = Math.max(w, row.reduce((s, p) => s + p.w + BUILDING_GAP, -BUILDING_GAP));
      h += ROW_GAP_ABOVE + Math.max(...row.map((p) => p.h)) + 1 + ROAD_H;
    }
    // The zoom needed to show it all on a 16:10 screen is set by the larger of these.
    const score = Math.max((w + MARGIN_X + 4) / 1.6, h + MARGIN_TOP + 3);
    if (score < bestScore - 1e-9) {
      bestScore = score;
      best = rows;
    }
  }
  return best;
}

// ───────────────────────────── the layout ─────────────────────────────

export interface LayoutOptions {
  /** Rooms a person unfolded, as unfoldKey(repoId, path): their folded children are drawn. */
  unfolded?: ReadonlySet<string>;
}

/** The key of a room in LayoutOptions.unfolded. */
export function unfoldKey(repoId: string, path: string): string {
  return `${repoId}|${normalizePath(path)}`;
}

/**
 * Lays out the village: one building per repository, in rows along roads, each building a floor
 * plan of its directories. Pure and deterministic.
 */
export function layoutVillage(
  repos: ReadonlyArray<VillageRepoInput>,
  workshop: VillageWorkshopInput | null = null,
  options: LayoutOptions = {},
): VillageLayout {
  const unfolded = options.unfolded ?? new Set<string>();
  const sorted = [...repos].sort((a, b) => cmp(a.name, b.name) || cmp(a.id, b.id));
  // The workshop stands first, by the village road, then the repositories by name.
  const pending = [...(workshop ? [prepareWorkshop(workshop)] : []), ...sorted.map((r) => prepare(r, unfolded))];

  // Rows: choose the row width whose village best fits a 16:10 screen (deterministic search).
  const rows = chooseRows(pending);

  const buildings: BuildingLayout[] = [];
  const roads: Rect[] = [];
  let y = MARGIN_TOP;
  let widest = 0;
  let firstRoadY = -1;
  let lastRoadY = -1;
  for (const row of rows) {
    const rowH = Math.max(...row.map((p) => p.h));
    const bottom = y + ROW_GAP_ABOVE + rowH; // exclusive: buildings end here, the entrance row starts here
    const roadY = bottom + 1;
    let x = MARGIN_X;
    for (const p of row) {
      const by = bottom - p.h;
      const rooms = p.top ? placeRooms(p.repoId, p.top, p.name, x, by) : p.kind === 'workshop' ? [workshopRoom(p, x, by)] : [constructionRoom(p, x, by)];
      const root = rooms[0];
      const entrance = { x: root.door.x, y: bottom };
      buildings.push({
        repoId: p.repoId,
        name: p.name,
        kind: p.kind,
        x,
        y: by,
        w: p.w,
        h: p.h,
        entrance,
        roadY,
        rooms,
        totalDirs: p.total,
        drawnDirs: p.drawn,
        ...(p.kind === 'workshop' ? { agents: p.agents ?? 0 } : {}),
      });
      roads.push({ x: entrance.x, y: bottom, w: 1, h: 1 }); // the stub from the door to the road
      x += p.w + BUILDING_GAP;
    }
    const rowRight = x - BUILDING_GAP;
    widest = Math.max(widest, rowRight);
    roads.push({ x: MARGIN_X - 4, y: roadY, w: rowRight + 2 - (MARGIN_X - 4), h: ROAD_H });
    if (firstRoadY < 0) firstRoadY = roadY;
    lastRoadY = roadY;
    y = roadY + ROAD_H;
  }
  if (rows.length > 0) {
    // The vertical road on the left joins every row's road, from the top of the village.
    roads.push({ x: MARGIN_X - 4, y: MARGIN_TOP - 1, w: 2, h: lastRoadY + ROAD_H - (MARGIN_TOP - 1) });
  }
  return {
    tile: TILE,
    width: Math.max(widest + 4, 2 * MARGIN_X),
    height: Math.max(y + 3, 2 * MARGIN_TOP),
    buildings,
    roads,
  };
}

// ───────────────────────────── queries ─────────────────────────────

interface BuildingIndex {
  rooms: Map<string, RoomLayout>;
}
const indexCache = new WeakMap<BuildingLayout, BuildingIndex>();
function indexOf(b: BuildingLayout): BuildingIndex {
  let idx = indexCache.get(b);
  if (!idx) {
    idx = { rooms: new Map(b.rooms.map((r) => [r.path, r])) };
    indexCache.set(b, idx);
  }
  return idx;
}

export function buildingFor(layout: VillageLayout, repoId: string): BuildingLayout | null {
  return layout.buildings.find((b) => b.repoId === repoId) ?? null;
}

/** The drawn room with exactly this path, if any. */
export function roomByPath(layout: VillageLayout, repoId: string, path: string): RoomLayout | null {
  const b = buildingFor(layout, repoId);
  return b ? (indexOf(b).rooms.get(normalizePath(path)) ?? null) : null;
}

/**
 * The deepest drawn room containing `path` (a file or directory, possibly deeper than drawn, or
 * collapsed into "+N more"); the root room when nothing deeper is drawn. Null only for an unknown
 * repository.
 */
export function roomFor(layout: VillageLayout, repoId: string, path: string): RoomLayout | null {
  const b = buildingFor(layout, repoId);
  if (!b) return null;
  const rooms = indexOf(b).rooms;
  let best = b.rooms[0];
  const segs = normalizePath(path).split('/').filter(Boolean);
  let p = '';
  for (const s of segs) {
    p = p === '' ? s : `${p}/${s}`;
    const r = rooms.get(p);
    if (!r) break;
    best = r;
  }
  return best;
}

/** Deterministic standing spot number `index` in a room (extra sprites share spots, slightly shifted). */
export function spotFor(room: RoomLayout, index: number): Point {
  const n = room.spots.length;
  const i = Math.max(0, Math.floor(index));
  const base = room.spots[i % n];
  const lap = Math.floor(i / n);
  if (lap === 0) return { x: base.x, y: base.y };
  const shift = [0.45, -0.45, 0.25, -0.25][(lap - 1) % 4];
  return { x: base.x + shift, y: base.y };
}

/** The deepest drawn room containing the tile point (x, y) (fractional tiles allowed), or null. */
export function roomAt(layout: VillageLayout, x: number, y: number): RoomLayout | null {
  const inside = (r: Rect) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
  for (const b of layout.buildings) {
    if (!inside(b)) continue;
    const rooms = indexOf(b).rooms;
    let cur = b.rooms[0];
    for (;;) {
      const next = cur.children.map((c) => rooms.get(c)!).find(inside);
      if (!next) return cur;
      cur = next;
    }
  }
  return null;
}

/** The chain of drawn rooms from the building's root to `room` (inclusive). */
export function roomChain(layout: VillageLayout, room: RoomLayout): RoomLayout[] {
  const b = buildingFor(layout, room.repoId);
  if (!b) return [room];
  const rooms = indexOf(b).rooms;
  const chain: RoomLayout[] = [];
  let cur: RoomLayout | undefined = room;
  while (cur) {
    chain.push(cur);
    cur = cur.parent === null ? undefined : rooms.get(cur.parent);
  }
  return chain.reverse();
}

function pushPoint(out: Point[], p: Point): void {
  const last = out[out.length - 1];
  if (last && last.x === p.x && last.y === p.y) return;
  // Drop the middle point of three collinear ones.
  const prev = out[out.length - 2];
  if (prev && last && ((prev.x === last.x && last.x === p.x) || (prev.y === last.y && last.y === p.y))) {
    const between = (a: number, b: number, c: number) => (a <= b && b <= c) || (a >= b && b >= c);
    if (between(prev.x, last.x, p.x) && between(prev.y, last.y, p.y)) out.pop();
  }
  out.push(p);
}

/**
 * The walk (tile coordinates, axis-aligned segments) from the building's entrance to the spot
 * `spotIndex` of `room`: through each door on the way, along corridors only.
 */
export function routeTo(layout: VillageLayout, room: RoomLayout, spotIndex: number): Point[] {
  return routeToPoint(layout, room, spotFor(room, spotIndex));
}

/**
 * The walk from the building's entrance to `spot`, a free floor tile of `room` (one of its spots or
 * crowd slots): through each door on the way, along corridors only.
 */
export function routeToPoint(layout: VillageLayout, room: RoomLayout, spot: Point): Point[] {
  const b = buildingFor(layout, room.repoId);
  if (!b) return [spot];
  const out: Point[] = [];
  pushPoint(out, { ...b.entrance });
  if (b.kind === 'construction' || b.kind === 'workshop') {
    pushPoint(out, { x: b.entrance.x, y: spot.y });
    pushPoint(out, spot);
    return out;
  }
  const chain = roomChain(layout, room);
  // Through the front door into the root room.
  const root = chain[0];
  pushPoint(out, { x: root.door.x, y: root.door.y });
  let cur: Point = { x: root.door.x, y: root.door.y - 1 }; // the bottom corridor row, just inside
  pushPoint(out, cur);
  // Changing rows happens in the free column by the left or right wall (whichever is shorter).
  const viaColumn = (p: RoomLayout, toX: number, toY: number) => {
    if (toY === cur.y) return;
    const left = p.x + 1;
    const right = p.x + p.w - 2;
    const col = Math.abs(cur.x - left) + Math.abs(toX - left) <= Math.abs(cur.x - right) + Math.abs(toX - right) ? left : right;
    pushPoint(out, { x: col, y: cur.y });
    pushPoint(out, { x: col, y: toY });
  };
  for (let i = 1; i < chain.length; i++) {
    const p = chain[i - 1];
    const c = chain[i];
    viaColumn(p, c.door.x, c.exitY);
    pushPoint(out, { x: c.door.x, y: c.exitY });
    pushPoint(out, { x: c.door.x, y: c.door.y });
    cur = { x: c.door.x, y: c.door.y - 1 };
    pushPoint(out, cur);
  }
  const t = chain[chain.length - 1];
  if (t.children.length > 0) viaColumn(t, spot.x, spot.y);
  else pushPoint(out, { x: cur.x, y: spot.y });
  pushPoint(out, spot);
  return out;
}

export interface Walk {
  /** Waypoints to visit, in order (the walker starts at the end of `from`). */
  points: Point[];
  /**
   * bases[i]: the route from the entrance that, followed by the walker's current position, says
   * where the walker is while heading to points[i] (so a walk can be re-planned mid-way).
   */
  bases: Point[][];
}

const samePoint = (a: Point, b: Point) => a.x === b.x && a.y === b.y;

/**
 * Plans the walk from the end of route `from` to the end of route `to` (both from the same
 * entrance): back along `from` to where the routes part, then along `to`. Every step follows one
 * of the two routes, so it never crosses a wall.
 */
export function planWalk(from: Point[], to: Point[]): Walk {
  let k = 0;
  while (k < from.length && k < to.length && samePoint(from[k], to[k])) k++;
  const points: Point[] = [];
  const bases: Point[][] = [];
  const stop = Math.max(0, k - 1);
  for (let j = from.length - 2; j >= stop; j--) {
    points.push(from[j]);
    bases.push(from.slice(0, j + 1));
  }
  for (let j = k === 0 ? 0 : k; j < to.length; j++) {
    points.push(to[j]);
    bases.push(to.slice(0, Math.max(1, j)));
  }
  return { points, bases };
}

/** The walk from the end of route `from` to the end of route `to`, as a polyline (see planWalk). */
export function routeBetween(from: Point[], to: Point[]): Point[] {
  const out: Point[] = [];
  if (from.length > 0) pushPoint(out, from[from.length - 1]);
  for (const p of planWalk(from, to).points) pushPoint(out, p);
  return out;
}

/**
 * Where the bugs of a room's alerts sit: `n` floor tiles of the room itself, deterministic, from
 * the bottom-right towards the top-left — never inside a child room, on a sprite's standing spot,
 * on the "+N more" note or in the door's column. Every other column first, so bugs do not touch;
 * more bugs than free tiles share tiles, slightly shifted (like spotFor).
 */
export function bugSpotsFor(layout: VillageLayout, room: RoomLayout, n: number): Point[] {
  if (n <= 0) return [];
  const b = buildingFor(layout, room.repoId);
  const rooms = b ? indexOf(b).rooms : new Map<string, RoomLayout>();
  const kids = room.children.map((c) => rooms.get(c)).filter((k): k is RoomLayout => !!k);
  const within = (x: number, y: number, r: Rect) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
  const spots = new Set(room.spots.map((p) => `${p.x},${p.y}`));
  const even: Point[] = [];
  const odd: Point[] = [];
  const right = room.x + room.w - 2;
  for (let y = room.y + room.h - 2; y >= room.y + 1; y--) {
    for (let x = right; x >= room.x + 1; x--) {
      if (x === room.door.x || spots.has(`${x},${y}`) || (room.note && within(x, y, room.note)) || kids.some((k) => within(x, y, k))) continue;
      ((right - x) % 2 === 0 ? even : odd).push({ x, y });
    }
  }
  const free = [...even, ...odd];
  if (free.length === 0) free.push({ x: room.x + Math.floor(room.w / 2), y: room.y + Math.floor(room.h / 2) });
  return Array.from({ length: n }, (_, i) => {
    const base = free[i % free.length]!;
    const lap = Math.floor(i / free.length);
    return lap === 0 ? { ...base } : { x: base.x + [0.3, -0.3, 0.15, -0.15][(lap - 1) % 4]!, y: base.y };
  });
}

// ───────────────────────────── crowds ─────────────────────────────

/** Sprite footprint in tiles (16×24 px figures on 16 px tiles): used to keep standing figures apart. */
export const FIGURE_W_TILES = 14 / 16;
export const FIGURE_H_TILES = 22 / 16;
/** Standing rows are this many tiles apart, so a head never covers the feet of the figure above. */
export const CROWD_ROW_STEP = 2;

const slotCache = new WeakMap<RoomLayout, Point[]>();

/**
 * Where sprites stand in a room, in the order they fill up: free floor of the room itself on a grid
 * (every tile across, every CROWD_ROW_STEP rows down), never inside a child room, on a child's
 * doorstep or on the "+N more" note. Only rows that no child room cuts are used, so the straight
 * walk along a row (see routeToPoint) never crosses a wall. Every other column first, so a few
 * sprites spread out before a crowd packs in. Deterministic; at least one slot.
 */
export function crowdSlots(layout: VillageLayout, room: RoomLayout): Point[] {
  const cached = slotCache.get(room);
  if (cached) return cached;
  const b = buildingFor(layout, room.repoId);
  let out: Point[];
  if (!b || b.kind !== 'building') {
    out = room.spots.map((p) => ({ ...p }));
  } else {
    const rooms = indexOf(b).rooms;
    const kids = room.children.map((c) => rooms.get(c)).filter((k): k is RoomLayout => !!k);
    const ix = room.x + 1;
    const iy = room.y + 1;
    const right = room.x + room.w - 2;
    const bottom = room.y + room.h - 2;
    const within = (x: number, y: number, r: Rect) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
    const doorsteps = new Set(kids.map((k) => `${k.door.x},${k.exitY}`));
    const rows: number[] = [];
    // Rows from the top; in a leaf the lowest row first (the door's side reads as "the floor").
    for (let y = kids.length > 0 ? iy + LOBBY - 1 : bottom; kids.length > 0 ? y <= bottom : y >= iy; y += kids.length > 0 ? 1 : -1) {
      if (kids.some((k) => y >= k.y && y < k.y + k.h)) continue;
      if (rows.length > 0 && Math.abs(y - rows[rows.length - 1]!) < CROWD_ROW_STEP) continue;
      rows.push(y);
    }
    out = [];
    for (const parity of [0, 1]) {
      for (const y of rows) {
        for (let x = ix + 1 + parity; x <= right - 1; x += 2) {
          if (doorsteps.has(`${x},${y}`) || (room.note && within(x, y, room.note))) continue;
          if (y === bottom && x === room.door.x) continue; // the room's own doorway stays clear
          out.push({ x, y });
        }
      }
    }
    if (out.length === 0) out = room.spots.map((p) => ({ ...p }));
  }
  slotCache.set(room, out);
  return out;
}

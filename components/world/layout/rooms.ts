/**
 * One building's floor plan: which directories are drawn (budgets and folding), their sizes and
 * shelf packing, and their rooms in tile coordinates. See index.ts for the room geometry.
 */
import { CONSTRUCTION_H, CONSTRUCTION_W, LEAF_H, LEAF_MAX_W, LEAF_MIN_W, LOBBY, MAX_CHILDREN, MAX_CHILDREN_UNFOLDED, MAX_DEPTH, MAX_ROOMS_PER_BUILDING, TINY_DIR_FILES, TINY_FOLD_SIBLINGS, WORKSHOP_H, WORKSHOP_ID, WORKSHOP_MAX_W, WORKSHOP_MIN_W, WORKSHOP_NAME } from './constants';
import { baseName, cmp, normalizePath, parentOf } from './paths';
import type { Point, RoomLayout, VillageRepoInput, VillageWorkshopInput } from './types';
import type { RepoTree } from '../../../protocol/world';

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

export function placeRooms(repoId: string, top: Drawn, repoName: string, x: number, y: number): RoomLayout[] {
  const out: RoomLayout[] = [];
  const walk = (d: Drawn, ax: number, ay: number, parent: string | null, exitY: number) => {
    const name = d.node.path === '' ? repoName : baseName(d.node.path);
    out.push(makeRoom(repoId, d, name, ax, ay, parent, exitY));
    for (const k of d.kids) walk(k, ax + k.rx, ay + k.ry, d.node.path, ay + k.rExit);
  };
  walk(top, x, y, null, y + top.h);
  return out;
}

export interface Pending {
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

export function prepare(repo: VillageRepoInput, unfolded: ReadonlySet<string>): Pending {
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

export function constructionRoom(p: Pending, x: number, y: number): RoomLayout {
  const spots: Point[] = [];
  for (let sx = x + 2; sx < x + p.w - 1 && spots.length < 5; sx += 2) spots.push({ x: sx, y: y + p.h - 3 + (spots.length % 2) });
  return singleRoom(p, x, y, spots);
}

export function prepareWorkshop(w: VillageWorkshopInput): Pending {
  const agents = Math.max(0, Math.floor(w.agents));
  // A bench every other tile, walls and a free column at each side.
  const width = Math.max(WORKSHOP_MIN_W, Math.min(WORKSHOP_MAX_W, 2 * agents + 4));
  return { repoId: WORKSHOP_ID, name: WORKSHOP_NAME, kind: 'workshop', agents, w: width, h: WORKSHOP_H, top: null, total: 0, drawn: 0 };
}

/**
 * The workshop's one room: benches along the top wall (row y+1), the workers' spots in front of
 * them (row y+2), a second row of spots further down for crowds.
 */
export function workshopRoom(p: Pending, x: number, y: number): RoomLayout {
  const spots: Point[] = [];
  for (let sx = x + 2; sx < x + p.w - 2; sx += 2) spots.push({ x: sx, y: y + 2 });
  for (let sx = x + 3; sx < x + p.w - 2; sx += 2) spots.push({ x: sx, y: y + 4 });
  return singleRoom(p, x, y, spots);
}

/** Splits buildings (in order) into rows no wider than `target` tiles. */

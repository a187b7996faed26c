/**
 * The actor simulation: where every sprite is, where it walks, and who stands in a crowd. PURE —
 * no pixi, no DOM, no clocks: `stepActors(state, sessions, layout, dt)` returns the next state, and
 * the renderer only draws what that state says (ai-town's split: the engine changes state, the
 * renderer draws snapshots).
 *
 * An actor object is replaced only when something about it changes, so a renderer can skip the
 * unchanged ones by identity, and a village where nothing moves reports `busy: false` (no frames).
 */
import type { SessionSummary } from '../../../protocol/ui';
import type { SessionState } from '../../../protocol/world';
import { buildingFor, crowdSlots, planWalk, roomFor, routeToPoint, type Point, type RoomLayout, type VillageLayout, type Walk } from '../layout';
import { FAILED_LINGER_MS, spawnsSprite } from '../status';

/** Slowest walk, in tiles per second (a short trip between neighbouring rooms). */
export const MIN_WALK_SPEED = 4;
/** Fastest walk, in tiles per second (so a trip across a huge building does not take forever). */
export const MAX_WALK_SPEED = 60;
/** A trip takes about this long: speed = length / TRIP_SECONDS, clamped to the two above. */
export const TRIP_SECONDS = 4;
/** A new sprite fades in over this long; a leaving one fades out over FADE_OUT_MS once outside. */
export const FADE_IN_MS = 300;
export const FADE_OUT_MS = 350;
/** The longest step the simulation takes at once (a tab in the background must not teleport walkers). */
export const MAX_STEP_MS = 100;

export type Direction = 'down' | 'up' | 'left' | 'right';

export interface SimActor {
  readonly id: string;
  readonly repoId: string;
  readonly kind: SessionSummary['kind'];
  readonly title: string;
  readonly state: SessionState;
  readonly reason: string;
  readonly activity: SessionSummary['activity'];
  readonly activitySince: number | null;
  /** What the agent said it is doing, or the gate its screen shows ("needs sign-in: codex"). */
  readonly activityDetail: string;
  /** Tile coordinates of the feet (fractional while walking). */
  readonly pos: Point;
  readonly dir: Direction;
  /** Whether it moved in the last step (the renderer animates the walk cycle). */
  readonly moving: boolean;
  /** Milliseconds walked since it last stood still (drives the walk cycle). */
  readonly walkMs: number;
  readonly walk: Walk | null;
  readonly walkIdx: number;
  /** Tiles per second of the current walk. */
  readonly speed: number;
  /** Route (from the entrance) of the slot it stands at or walks to. */
  readonly home: readonly Point[];
  /** The room it is in or walking to; null while leaving. */
  readonly roomPath: string | null;
  /** `${repoId}|${roomPath}|${slot}`: re-planned only when this changes. */
  readonly slotKey: string;
  /** Simulation time when it was first seen FAILED. */
  readonly failedAt: number | null;
  readonly leaving: boolean;
  /** 0..1 opacity. */
  readonly fade: number;
  /** Part of a crowd that does not fit its room: not drawn, counted on the room's "+N" badge. */
  readonly hidden: boolean;
}

/** A room with more sprites than slots: the badge stands on the last slot. */
export interface Crowd {
  readonly repoId: string;
  readonly roomPath: string;
  /** Tile where the "+N" badge stands. */
  readonly at: Point;
  /** Every session in the room (sorted by id); the last `hidden.length` are not drawn. */
  readonly all: readonly string[];
  readonly hidden: readonly string[];
}

export interface SimState {
  /** Simulation time in ms (sum of the steps). */
  readonly time: number;
  /** Every actor, the leaving ones included. */
  readonly actors: ReadonlyMap<string, SimActor>;
  readonly crowds: readonly Crowd[];
  /** Whether anything moves or fades: a renderer needs frames only while this is true. */
  readonly busy: boolean;
  /** Simulation time of the next change while nothing moves (a failed sprite leaving), or null. */
  readonly wakeAt: number | null;
  /** What the last reconciliation saw (re-done when either changes, or when an actor left). */
  readonly sessions: readonly SessionSummary[] | null;
  readonly layout: VillageLayout | null;
  readonly stale: boolean;
}

export function initialSimState(): SimState {
  return { time: 0, actors: new Map(), crowds: [], busy: false, wakeAt: null, sessions: null, layout: null, stale: false };
}

const manhattan = (a: Point, b: Point) => Math.abs(a.x - b.x) + Math.abs(a.y - b.y);

function currentHistory(a: SimActor): readonly Point[] {
  if (a.walk && a.walkIdx < a.walk.points.length) return [...a.walk.bases[a.walkIdx]!, { ...a.pos }];
  return a.home;
}

/** Starts a walk from wherever the actor is (mid-walk included) to the end of `route`. */
function walkTo(a: SimActor, route: Point[]): Pick<SimActor, 'walk' | 'walkIdx' | 'speed' | 'home'> {
  const walk = planWalk([...currentHistory(a)], route);
  let len = 0;
  let prev = a.pos;
  for (const p of walk.points) {
    len += manhattan(prev, p);
    prev = p;
  }
  return { walk, walkIdx: 0, speed: Math.max(MIN_WALK_SPEED, Math.min(MAX_WALK_SPEED, len / TRIP_SECONDS)), home: route };
}

function leave(a: SimActor, layout: VillageLayout | null): SimActor {
  const b = layout ? buildingFor(layout, a.repoId) : null;
  if (a.leaving) return a;
  if (!b) return { ...a, leaving: true, roomPath: null, walk: null, hidden: false };
  return { ...a, leaving: true, roomPath: null, hidden: false, ...walkTo(a, [b.entrance, { x: b.entrance.x, y: b.entrance.y + 1 }]) };
}

function withStatus(a: SimActor, s: SessionSummary, time: number): SimActor {
  const failedAt = s.state === 'FAILED' && a.failedAt === null ? time : a.failedAt;
  if (
    a.title === s.title &&
    a.state === s.state &&
    a.reason === s.reason &&
    a.activity === s.activity &&
    a.activitySince === s.activity_since &&
    a.activityDetail === s.activity_detail &&
    a.failedAt === failedAt
  ) {
    return a;
  }
  return { ...a, title: s.title, state: s.state, reason: s.reason, activity: s.activity, activitySince: s.activity_since, activityDetail: s.activity_detail, failedAt };
}

function newActor(s: SessionSummary, start: Point): SimActor {
  return {
    id: s.id,
    repoId: s.repo_id,
    kind: s.kind,
    title: s.title,
    state: s.state,
    reason: s.reason,
    activity: s.activity,
    activitySince: s.activity_since,
    activityDetail: s.activity_detail,
    pos: { ...start },
    dir: 'up',
    moving: false,
    walkMs: 0,
    walk: null,
    walkIdx: 0,
    speed: MIN_WALK_SPEED,
    home: [start],
    roomPath: null,
    slotKey: '',
    failedAt: null,
    leaving: false,
    fade: 0,
    hidden: false,
  };
}

/**
 * Assigns sessions to rooms and slots: sessions in a room are ranked by id; when there are more
 * than slots, all but the last slot hold one sprite each and the rest wait (hidden) on the badge.
 */
function reconcile(prev: SimState, sessions: readonly SessionSummary[], layout: VillageLayout): { actors: Map<string, SimActor>; crowds: Crowd[] } {
  const layoutChanged = prev.layout !== layout;
  const actors = new Map<string, SimActor>();
  for (const [id, a] of prev.actors) {
    // A new geometry: leaving sprites are simply gone, the others stand anew (see below).
    if (layoutChanged && a.leaving) continue;
    actors.set(id, a);
  }
  const inRoom = new Map<string, { room: RoomLayout; ids: string[] }>();
  const roomOf = new Map<string, RoomLayout>();
  for (const s of sessions) {
    const a = actors.get(s.id);
    const shown = a ? !a.leaving : spawnsSprite(s);
    if (!shown || s.state === 'COMPLETED') continue;
    const room = roomFor(layout, s.repo_id, s.room_path);
    if (!room) continue;
    roomOf.set(s.id, room);
    const key = `${room.repoId}|${room.path}`;
    const entry = inRoom.get(key) ?? { room, ids: [] };
    entry.ids.push(s.id);
    inRoom.set(key, entry);
  }
  const crowds: Crowd[] = [];
  const slotOf = new Map<string, { slot: Point; index: number; hidden: boolean }>();
  for (const { room, ids } of inRoom.values()) {
    ids.sort();
    const slots = crowdSlots(layout, room);
    const overflow = ids.length > slots.length;
    const shown = overflow ? slots.length - 1 : ids.length;
    ids.forEach((id, i) => {
      const index = Math.min(i, slots.length - 1);
      slotOf.set(id, { slot: slots[index]!, index, hidden: i >= shown });
    });
    if (overflow) crowds.push({ repoId: room.repoId, roomPath: room.path, at: { ...slots[slots.length - 1]! }, all: ids, hidden: ids.slice(shown) });
  }

  const present = new Set<string>();
  for (const s of sessions) {
    present.add(s.id);
    let a = actors.get(s.id);
    const room = roomOf.get(s.id);
    if (a && !a.leaving && (s.state === 'COMPLETED' || !room || a.repoId !== s.repo_id)) {
      actors.set(s.id, leave(withStatus(a, s, prev.time), layout));
      continue;
    }
    if (!room || (a && a.leaving)) {
      if (a) actors.set(s.id, withStatus(a, s, prev.time));
      continue;
    }
    const b = buildingFor(layout, s.repo_id)!;
    if (!a) a = newActor(s, b.entrance);
    else if (layoutChanged) a = { ...a, pos: { ...b.entrance }, home: [b.entrance], walk: null, slotKey: '' };
    a = withStatus(a, s, prev.time);
    const { slot, index, hidden } = slotOf.get(s.id)!;
    const slotKey = `${room.repoId}|${room.path}|${index}`;
    if (a.slotKey !== slotKey || a.roomPath !== room.path) {
      const route = routeToPoint(layout, room, slot);
      a = { ...a, slotKey, roomPath: room.path, ...walkTo(a, route) };
      // Hidden ones wait on the badge: no walk to draw. Existing sprites in a new geometry stand
      // at their new spots at once (only sprites seen for the first time walk in).
      if (hidden || (layoutChanged && prev.actors.has(s.id))) {
        a = { ...a, pos: { ...route[route.length - 1]! }, walk: null, walkIdx: 0, fade: layoutChanged ? 1 : a.fade };
      }
    }
    if (a.hidden !== hidden) a = { ...a, hidden };
    actors.set(s.id, a);
  }
  for (const [id, a] of actors) {
    if (!present.has(id) && !a.leaving) actors.set(id, leave(a, layout));
  }
  return { actors, crowds };
}

/** Advances one actor by dt ms along its walk; returns null when it has faded out for good. */
function advance(a: SimActor, dt: number, time: number, layout: VillageLayout | null): SimActor | null {
  let next = a;
  if (next.fade < 1 && !next.leaving) next = { ...next, fade: Math.min(1, next.fade + dt / FADE_IN_MS) };
  if (next.walk && next.walkIdx < next.walk.points.length) {
    const points = next.walk.points;
    let budget = (next.speed * dt) / 1000;
    let pos = next.pos;
    let idx = next.walkIdx;
    let dir = next.dir;
    let moved = false;
    while (budget > 0 && idx < points.length) {
      const target = points[idx]!;
      const dx = target.x - pos.x;
      const dy = target.y - pos.y;
      const d = Math.abs(dx) + Math.abs(dy);
      if (d > 1e-6) {
        dir = Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? 'right' : 'left') : dy > 0 ? 'down' : 'up';
        moved = true;
      }
      if (d <= budget) {
        pos = { x: target.x, y: target.y };
        budget -= d;
        idx++;
      } else {
        // Axis-aligned segments: move along the one axis that differs (x first if both do).
        pos = Math.abs(dx) > 1e-6 ? { x: pos.x + Math.sign(dx) * Math.min(budget, Math.abs(dx)), y: pos.y } : { x: pos.x, y: pos.y + Math.sign(dy) * budget };
        budget = 0;
      }
    }
    const done = idx >= points.length;
    next = { ...next, pos, dir, walkIdx: idx, walk: done ? null : next.walk, moving: moved, walkMs: moved ? next.walkMs + dt : 0 };
  } else if (next.moving || next.walkMs !== 0 || (next.dir !== 'down' && !next.leaving)) {
    next = { ...next, moving: false, walkMs: 0, dir: next.leaving ? next.dir : 'down' };
  }
  if (next.failedAt !== null && !next.leaving && time - next.failedAt > FAILED_LINGER_MS) next = leave(next, layout);
  if (next.leaving && !next.walk) {
    const fade = next.fade - dt / FADE_OUT_MS;
    if (fade <= 0) return null;
    next = { ...next, fade };
  }
  return next;
}

/**
 * One step of the village: reconcile with the sessions and layout (when they changed), then move
 * every actor dt ms along its walk. Pure: the same inputs give the same state.
 */
export function stepActors(state: SimState, sessions: readonly SessionSummary[], layout: VillageLayout | null, dt: number): SimState {
  const step = Math.max(0, Math.min(MAX_STEP_MS, dt));
  const time = state.time + step;
  let actors: Map<string, SimActor> | ReadonlyMap<string, SimActor> = state.actors;
  let crowds = state.crowds;
  if (layout && (sessions !== state.sessions || layout !== state.layout || state.stale)) {
    const r = reconcile(state, sessions, layout);
    actors = r.actors;
    crowds = r.crowds;
  }
  const out = new Map<string, SimActor>();
  let busy = false;
  let stale = false;
  let wakeAt: number | null = null;
  for (const [id, a] of actors) {
    const next = advance(a, step, time, layout);
    if (!next) {
      stale = true; // a sprite left: hidden members of a crowd may now fit
      continue;
    }
    if (next.leaving && !a.leaving) stale = true;
    // A walker that just arrived still turns to face the viewer on the next step.
    if (next.walk || next.moving || next.fade < 1 || next.leaving || next.dir !== 'down') busy = true;
    if (next.failedAt !== null && !next.leaving) wakeAt = Math.min(wakeAt ?? Infinity, next.failedAt + FAILED_LINGER_MS + 1);
    out.set(id, next);
  }
  return { time, actors: out, crowds, busy: busy || stale, wakeAt, sessions, layout, stale };
}

/** Whether any actor appeared, left or changed between two states (unchanged actors keep their object). */
export function actorsChanged(prev: SimState, next: SimState): boolean {
  if (prev.actors.size !== next.actors.size) return true;
  for (const [id, a] of next.actors) if (prev.actors.get(id) !== a) return true;
  return false;
}

/** Where a sprite stands or walks (tile coordinates of its feet), for hit tests and the debug API. */
export function actorTarget(a: SimActor): Point {
  return a.home.length ? a.home[a.home.length - 1]! : a.pos;
}

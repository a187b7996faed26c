/** The read-only debug / test API (window.__village when test hooks are on): answers from the engine's state. */
import { TILE, roomAt, roomByPath, type Point, type VillageLayout } from '../layout';
import { bubbleFor } from '../status';
import type { ActorsLayer } from './actors-layer';
import { tileToWorld } from './actors-layer';
import type { Camera } from './camera';
import type { MapLayer } from './map-layer';
import type { PatrolLayer } from './patrol-layer';
import type { SimState } from './simulation';
import type { FrameTimes, VillageDebugApi } from './types';

export interface DebugSources {
  ready(): boolean;
  frames(): number;
  asleep(): boolean;
  staticRedraws(): number;
  mapSettled(): boolean;
  layout(): VillageLayout | null;
  sim(): SimState;
  trails: RoomTrails;
  cam: Camera;
  canvas: HTMLCanvasElement;
  actors: ActorsLayer;
  map: MapLayer;
  patrol: PatrolLayer;
  zoomTo(zoom: number, focus?: { repoId: string; roomPath: string }): void;
  measureFrames(ms: number, panPx?: number): Promise<FrameTimes>;
}

/** Longest room trail kept per sprite. */
const MAX_TRAIL = 64;

/**
 * The rooms each sprite was sent to, recorded whenever the sessions change (the engine reconciles
 * at once then), so a reader polling a busy page cannot miss a room the sprite only passed through.
 */
export class RoomTrails {
  private readonly trails = new Map<string, string[]>();

  record(sim: SimState): void {
    for (const [id, a] of sim.actors) {
      if (a.roomPath === null) continue;
      const trail = this.trails.get(id) ?? [];
      if (trail.at(-1) !== a.roomPath) trail.push(a.roomPath);
      if (trail.length > MAX_TRAIL) trail.shift();
      this.trails.set(id, trail);
    }
  }

  get(id: string): string[] {
    return [...(this.trails.get(id) ?? [])];
  }
}

export function createDebugApi(d: DebugSources): VillageDebugApi {
  const toClient = (wx: number, wy: number) => {
    const r = d.canvas.getBoundingClientRect();
    const p = d.cam.toScreen(wx, wy);
    return { x: r.left + p.x, y: r.top + p.y };
  };
  return {
    get ready() {
      return d.ready();
    },
    get zoom() {
      return d.cam.zoom;
    },
    get frames() {
      return d.frames();
    },
    get asleep() {
      return d.asleep();
    },
    get staticRedraws() {
      return d.staticRedraws();
    },
    get mapSettled() {
      return d.mapSettled();
    },
    zoomTo: (zoom, focus) => d.zoomTo(zoom, focus),
    measureFrames: (ms, panPx) => d.measureFrames(ms, panPx),
    spriteScreenPosition(id) {
      const a = d.sim().actors.get(id);
      if (!a || a.hidden) return null;
      const w = tileToWorld(a.pos);
      return toClient(Math.round(w.x), Math.round(w.y) - 11 * d.cam.spriteScale);
    },
    spriteRoom(id) {
      return d.sim().actors.get(id)?.roomPath ?? null;
    },
    spriteWalking(id) {
      return (d.sim().actors.get(id)?.walk ?? null) !== null;
    },
    spriteTrail(id) {
      return d.trails.get(id);
    },
    spriteBubble(id) {
      const a = d.sim().actors.get(id);
      if (!a || a.hidden) return null;
      const kind = bubbleFor(a);
      return kind !== null && !(a.leaving && a.state !== 'FAILED') ? kind : null;
    },
    spriteHidden(id) {
      return d.sim().actors.get(id)?.hidden ?? false;
    },
    alertRoom: (id) => d.patrol.alertRoom(id),
    alertScreenPosition(id) {
      const p = d.patrol.alertPosition(id);
      return p ? toClient(p.x, p.y) : null;
    },
    health: (repoId) => d.patrol.health(repoId),
    smoking: (repoId) => d.patrol.smoking(repoId),
    foldMarkerScreenPosition(repoId, roomPath) {
      const r = d.map.markerOf(repoId, roomPath);
      return r ? toClient((r.x + r.w / 2) * TILE, (r.y + 0.5) * TILE) : null;
    },
    roomScreenPosition(repoId, roomPath) {
      const layout = d.layout();
      if (!layout) return null;
      const r = roomByPath(layout, repoId, roomPath);
      if (!r) return null;
      // A wall tile of this room (walls belong to the room itself, not to a child) where no sprite
      // stands, preferably on screen: the top wall right of the name plate first, then the others.
      const cands: Point[] = [];
      for (let x = r.x + r.w - 2; x > r.x; x--) cands.push({ x, y: r.y });
      for (let y = r.y + 1; y < r.y + r.h - 1; y++) cands.push({ x: r.x, y }, { x: r.x + r.w - 1, y });
      for (let x = r.x + 1; x < r.x + r.w - 1; x++) if (x !== r.door.x) cands.push({ x, y: r.y + r.h - 1 });
      const rect = d.canvas.getBoundingClientRect();
      let fallback: { x: number; y: number } | null = null;
      for (const c of cands) {
        const wx = (c.x + 0.5) * TILE;
        const wy = (c.y + 0.5) * TILE;
        if (d.actors.actorAt(wx, wy, d.cam)) continue;
        if (roomAt(layout, c.x + 0.5, c.y + 0.5) !== r) continue;
        if (d.map.markerAt(c.x + 0.5, c.y + 0.5, d.cam.zoom)) continue;
        const p = toClient(wx, wy);
        fallback ??= p;
        if (p.x >= rect.left && p.x < rect.right && p.y >= rect.top && p.y < rect.bottom) return p;
      }
      return fallback ?? toClient((r.x + r.w / 2) * TILE, (r.y + 0.5) * TILE);
    },
  };
}

export { tileToWorld };

/**
 * The pixi side of the village: map, sprites, camera, input. Loaded with a dynamic import from
 * Village.tsx (browser only). Not React: Village.tsx feeds it the layout, sessions and selection.
 */
import { Application, BitmapFont, BitmapText, Container, Graphics, Sprite, Texture, TilingSprite } from 'pixi.js';
import type { RepoSummary, SessionSummary } from '../../protocol/ui';
import type { AlertSummary, RepoHealth } from '../../protocol/patrols';
import type { SessionState } from '../../protocol/world';
import { TILE, bugSpotsFor, buildingFor, planWalk, type BuildingLayout, roomAt, roomByPath, roomFor, routeTo, type Point, type RoomLayout, type VillageLayout, type Walk } from './layout';
import { paintBuilding } from './paint';
import { BACKGROUND, PALETTE, createTextures, hashString, makeCanvas, noise, type Direction, type VillageTextures, type WalkFrames } from './sprites';
import { FAILED_LINGER_MS, bubbleFor, spawnsSprite, statusText } from './status';

export interface EngineCallbacks {
  onSelectSession(id: string): void;
  onSelectRoom(repoId: string, roomPath: string): void;
  /** Clicking a bug (an alert from a patrol). */
  onSelectAlert(id: string): void;
}

export interface VillageDebugApi {
  readonly ready: boolean;
  /** Client (page) coordinates of the sprite's centre, for a real mouse click. */
  spriteScreenPosition(sessionId: string): { x: number; y: number } | null;
  /** The room path the sprite is in or walking to (null when it is leaving or unknown). */
  spriteRoom(sessionId: string): string | null;
  /** The bubble drawn over the sprite ('approval', 'input', …), null when none is shown. */
  spriteBubble(sessionId: string): string | null;
  /** Client coordinates of a point that selects exactly this room when clicked (its top wall). */
  roomScreenPosition(repoId: string, roomPath: string): { x: number; y: number } | null;
  /** Current zoom level (one of ZOOMS). */
  readonly zoom: number;
  /** The room an alert's bug sits in (null when it is not shown). */
  alertRoom(alertId: string): string | null;
  /** Client coordinates of an alert's bug, for a real mouse click. */
  alertScreenPosition(alertId: string): { x: number; y: number } | null;
  /** The health a building's bar shows (0..1), null when it has none. */
  health(repoId: string): number | null;
  /** Whether the building smokes (its build patrol fails). */
  smoking(repoId: string): boolean;
}

declare global {
  interface Window {
    /** Read-only debug / test API of the mounted village (see VillageDebugApi). */
    __village?: VillageDebugApi;
  }
}

export interface VillageEngine {
  setWorld(layout: VillageLayout, repos: readonly RepoSummary[]): void;
  setSessions(sessions: readonly SessionSummary[]): void;
  setSelection(sessionId: string | null, room: { repoId: string; roomPath: string } | null): void;
  /** Patrol results: open alerts become bugs in their rooms; health bars and smoke over buildings. */
  setPatrolState(alerts: readonly AlertSummary[], health: readonly RepoHealth[]): void;
  setSelectedAlert(alertId: string | null): void;
  /** Re-fits the whole village in view. */
  fit(): void;
  /** The read-only debug / test API (Village.tsx publishes it as window.__village). */
  readonly debugApi: VillageDebugApi;
  destroy(): void;
}

/** Zoom levels: integer-ish so pixels stay crisp. */
export const ZOOMS = [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4] as const;
/** Lowest zoom a fit may choose for a very large village. */
const MIN_ZOOM = 0.1;
/** Buildings get full-resolution pixels from this zoom up (below it a quarter-resolution picture). */
const HI_DETAIL_ZOOM = 0.3;
const LO_SCALE = 0.25;
const FONT_STACK = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace';
const FEET_Y = 0.9; // where feet stand inside a tile (fraction of the tile)
const WALK_FRAME_MS = 140;
const DRAG_THRESHOLD = 4;

// ───────────────────────────── fonts ─────────────────────────────

type FontRole = 'label' | 'title' | 'note';
const FONT_SIZES: Record<FontRole, readonly [number, number, number]> = {
  label: [12, 15, 19],
  title: [13, 17, 22],
  note: [11, 13, 16],
};
let installedResolution = 0;
function fontName(role: FontRole, tier: number): string {
  return `village-${role}-${tier}`;
}
function installFonts(resolution: number): void {
  if (installedResolution === resolution) return;
  for (const role of Object.keys(FONT_SIZES) as FontRole[]) {
    FONT_SIZES[role].forEach((size, tier) => {
      const name = fontName(role, tier);
      if (installedResolution) BitmapFont.uninstall(name);
      BitmapFont.install({
        name,
        style: {
          fontFamily: FONT_STACK,
          fontSize: size,
          fontWeight: role === 'title' ? 'bold' : 'normal',
          fill: role === 'note' ? '#efe6cf' : '#fbf8f0',
          stroke: { color: PALETTE.outline, width: role === 'note' ? 3 : 3.5, join: 'round' },
        },
        chars: [[' ', '~'], '…'],
        resolution,
        padding: 3,
      });
    });
  }
  installedResolution = resolution;
}

// ───────────────────────────── helpers ─────────────────────────────

const dist = (a: Point, b: Point) => Math.abs(a.x - b.x) + Math.abs(a.y - b.y);

interface Actor {
  id: string;
  repoId: string;
  kind: SessionSummary['kind'];
  node: Container;
  body: Sprite;
  bubble: Sprite;
  ring: Graphics;
  frames: WalkFrames;
  dir: Direction;
  frameT: number;
  pos: Point;
  walk: Walk | null;
  walkIdx: number;
  speed: number;
  /** Route (from the entrance) of the spot it stands at or walks to. */
  home: Point[];
  roomPath: string | null;
  spotKey: string;
  title: string;
  state: SessionState;
  reason: string;
  activity: SessionSummary['activity'];
  activitySince: number | null;
  activityDetail: string;
  failedAt: number | null;
  leaving: boolean;
  fade: number; // 0..1 while appearing, then 1; decreases when gone
  appear: boolean;
}

interface Label {
  node: BitmapText | null;
  role: FontRole;
  full: string;
  /** World px of the text's left edge and of the row's vertical centre. */
  wx: number;
  wy: number;
  /** Maximum width in world px. */
  wMax: number;
  minZoom: number;
  align: 'left' | 'center' | 'right';
}

interface BuildingView {
  b: BuildingLayout;
  holder: Container;
  lo: Sprite;
  loTex: Texture;
  hi: Sprite[] | null;
  hiTex: Texture[];
}

// ───────────────────────────── the engine ─────────────────────────────

export async function createVillageEngine(host: HTMLElement, callbacks: () => EngineCallbacks): Promise<VillageEngine> {
  const resolution = Math.max(1, Math.min(3, window.devicePixelRatio || 1));
  const app = new Application();
  await app.init({
    resizeTo: host,
    background: BACKGROUND,
    antialias: false,
    resolution,
    autoDensity: true,
    roundPixels: true,
  });
  installFonts(resolution);
  const tex: VillageTextures = createTextures();

  const canvas = app.canvas;
  canvas.style.display = 'block';
  canvas.style.touchAction = 'none';
  canvas.style.imageRendering = 'pixelated';
  host.appendChild(canvas);

  // Layers.
  const world = new Container({ label: 'world' });
  const ground = new Container({ label: 'ground' });
  const buildingsLayer = new Container({ label: 'buildings' });
  const highlight = new Graphics({ label: 'room-highlight' });
  const decoLayer = new Container({ label: 'trees' });
  const actorsLayer = new Container({ label: 'actors', sortableChildren: true });
  // Patrol results: bugs on the floor (under the sprites), health bars and smoke over the buildings.
  const bugsLayer = new Container({ label: 'bugs' });
  const healthLayer = new Graphics({ label: 'health-bars' });
  const smokeLayer = new Container({ label: 'smoke' });
  world.addChild(ground, decoLayer, buildingsLayer, highlight, bugsLayer, actorsLayer, healthLayer, smokeLayer);
  const overlay = new Container({ label: 'labels' }); // not scaled; moves with the camera
  const hud = new Container({ label: 'hud' }); // fixed on screen
  // Grass everywhere: a screen-sized tiling sprite that follows the camera.
  const grass = new TilingSprite({ texture: tex.tile('grass'), width: 16, height: 16 });
  app.stage.addChild(grass, world, overlay, hud);

  // Name tag over the selected sprite: text on a dark pill.
  const selTitle = new Container({ label: 'selected-title' });
  const selTitleBg = new Graphics();
  const selTitleText = new BitmapText({ text: '', style: { fontFamily: fontName('label', 0), fontSize: FONT_SIZES.label[0] } });
  selTitle.addChild(selTitleBg, selTitleText);
  selTitle.visible = false;
  let selTitleKey = '';
  const emptyText = new BitmapText({ text: 'No repositories yet', style: { fontFamily: fontName('title', 1), fontSize: FONT_SIZES.title[1] } });
  emptyText.visible = false;
  hud.addChild(emptyText);

  // Character widths per font (monospace, measured once).
  const charW = new Map<string, number>();
  for (const role of Object.keys(FONT_SIZES) as FontRole[]) {
    FONT_SIZES[role].forEach((size, tier) => {
      const style = { fontFamily: fontName(role, tier), fontSize: size };
      const m10 = new BitmapText({ text: 'M'.repeat(10), style });
      const m20 = new BitmapText({ text: 'M'.repeat(20), style });
      charW.set(fontName(role, tier), Math.max(4, (m20.width - m10.width) / 10));
      m10.destroy();
      m20.destroy();
    });
  }

  // State.
  let layout: VillageLayout | null = null;
  let repos: readonly RepoSummary[] = [];
  let views: BuildingView[] = [];
  let labels: Label[] = [];
  const actors = new Map<string, Actor>();
  const leavingActors = new Set<Actor>();
  let selectedSession: string | null = null;
  let selectedRoom: { repoId: string; roomPath: string } | null = null;
  let lastSessions: readonly SessionSummary[] = [];
  let alerts: readonly AlertSummary[] = [];
  const healthByRepo = new Map<string, RepoHealth>();
  let selectedAlert: string | null = null;
  const bugs = new Map<string, { sprite: Sprite; ring: Graphics; room: string; phase: number }>();
  const smoke = new Map<string, { sprites: Sprite[]; x: number; y: number }>();
  const healthTexts = new Map<string, { node: BitmapText; wx: number; wy: number }>();
  const cam = { zoom: 1, x: 0, y: 0 };
  let minZoom: number = ZOOMS[0];
  let fitted = false;
  /** Until the user pans or zooms, the village re-fits whenever the view changes size. */
  let userMoved = false;
  let labelsZoom = -1;
  let framesSinceWorld = -1;
  let ready = false;
  let destroyed = false;
  let time = 0;

  const viewW = () => app.screen.width;
  const viewH = () => app.screen.height;

  // ───────── camera ─────────

  function clampCamera(): void {
    if (!layout) return;
    const ww = layout.width * TILE * cam.zoom;
    const wh = layout.height * TILE * cam.zoom;
    // The view's centre stays over the village.
    cam.x = Math.min(viewW() / 2, Math.max(viewW() / 2 - ww, cam.x));
    cam.y = Math.min(viewH() / 2, Math.max(viewH() / 2 - wh, cam.y));
  }

  function applyCamera(): void {
    clampCamera();
    const x = Math.round(cam.x);
    const y = Math.round(cam.y);
    world.scale.set(cam.zoom);
    world.position.set(x, y);
    grass.width = viewW();
    grass.height = viewH();
    grass.tileScale.set(cam.zoom);
    grass.tilePosition.set(x, y);
    overlay.position.set(x, y);
    if (labelsZoom !== cam.zoom) {
      setSmooth(cam.zoom < 1);
      updateSelectionVisuals();
    }
    layoutLabels();
    positionPatrolOverlay();
    updateDetail(0);
    emptyText.position.set(Math.round(viewW() / 2 - emptyText.width / 2), Math.round(viewH() / 2 - emptyText.height / 2));
  }

  let smoothNow = false;
  function setSmooth(smooth: boolean): void {
    tex.setSmooth(smooth);
    if (smooth === smoothNow) return;
    smoothNow = smooth;
    for (const v of views) for (const t of v.hiTex) t.source.scaleMode = smooth ? 'linear' : 'nearest';
  }

  function fit(): void {
    if (!layout || viewW() < 8 || viewH() < 8) return;
    const pad = 24;
    const sw = (viewW() - 2 * pad) / (layout.width * TILE);
    const sh = (viewH() - 2 * pad) / (layout.height * TILE);
    const want = Math.min(sw, sh);
    let z: number;
    if (want >= 1) {
      // Crisp pixels: the largest integer-ish level that fits (at most 2, to keep context).
      z = 1;
      for (const level of ZOOMS) if (level <= want && level <= 2) z = level;
    } else {
      // Zoomed out, textures are filtered anyway: use the exact fit (in 1/20 steps).
      z = Math.max(MIN_ZOOM, Math.floor(want * 20) / 20);
    }
    minZoom = Math.min(ZOOMS[0], z);
    cam.zoom = z;
    cam.x = (viewW() - layout.width * TILE * z) / 2;
    cam.y = (viewH() - layout.height * TILE * z) / 2;
    fitted = true;
    applyCamera();
  }

  function zoomAt(sx: number, sy: number, steps: number): void {
    userMoved = true;
    // Step to the next level of ZOOMS (a fitted zoom may lie between levels, or below them).
    const levels: number[] = ZOOMS.filter((z) => z >= minZoom);
    if (minZoom < ZOOMS[0]) levels.unshift(minZoom);
    const next =
      steps > 0 ? (levels.find((z) => z > cam.zoom + 1e-9) ?? cam.zoom) : ([...levels].reverse().find((z) => z < cam.zoom - 1e-9) ?? cam.zoom);
    if (next === cam.zoom) return;
    const f = next / cam.zoom;
    cam.x = sx - (sx - cam.x) * f;
    cam.y = sy - (sy - cam.y) * f;
    cam.zoom = next;
    applyCamera();
  }

  function panBy(dx: number, dy: number): void {
    userMoved = true;
    cam.x += dx;
    cam.y += dy;
    applyCamera();
  }

  const worldToClient = (wx: number, wy: number) => {
    const r = canvas.getBoundingClientRect();
    return { x: r.left + Math.round(cam.x) + wx * cam.zoom, y: r.top + Math.round(cam.y) + wy * cam.zoom };
  };

  // ───────── labels ─────────

  function tierFor(zoom: number): number {
    return zoom < 1.5 ? 0 : zoom < 3 ? 1 : 2;
  }

  /**
   * Shows the labels that fit at this zoom and lie in (or near) the view; BitmapText nodes are
   * created lazily, so a village with thousands of rooms only pays for what is on screen.
   */
  function layoutLabels(): void {
    const zoomChanged = labelsZoom !== cam.zoom;
    labelsZoom = cam.zoom;
    const z = cam.zoom;
    const tier = tierFor(z);
    const ox = Math.round(cam.x);
    const oy = Math.round(cam.y);
    const margin = 200;
    for (const l of labels) {
      const font = fontName(l.role, tier);
      const cw = charW.get(font) ?? 7;
      const n = Math.floor((l.wMax * z) / cw);
      const sx = l.wx * z + ox;
      const sy = l.wy * z + oy;
      const onScreen = sx + l.wMax * z > -margin && sx - l.wMax * z < viewW() + margin && sy > -margin && sy < viewH() + margin;
      if (z < l.minZoom || n < 3 || !onScreen) {
        if (l.node) l.node.visible = false;
        continue;
      }
      const fresh = !l.node;
      if (!l.node) {
        l.node = new BitmapText({ text: '', style: { fontFamily: font, fontSize: FONT_SIZES[l.role][tier] } });
        overlay.addChild(l.node);
      }
      const node = l.node;
      node.visible = true;
      if (!fresh && !zoomChanged) continue;
      const text = l.full.length <= n ? l.full : `${l.full.slice(0, n - 1)}…`;
      if (node.style.fontFamily !== font) {
        node.style.fontFamily = font;
        node.style.fontSize = FONT_SIZES[l.role][tier];
      }
      if (node.text !== text) node.text = text;
      const w = l.align === 'center' ? (text.length * cw) / 2 : l.align === 'right' ? text.length * cw : 0;
      node.position.set(Math.round(l.wx * z - w), Math.round(l.wy * z - FONT_SIZES[l.role][tier] * 0.62));
    }
  }

  function addLabel(role: FontRole, full: string, wx: number, wy: number, wMax: number, minZoom: number, align: Label['align'] = 'left'): void {
    labels.push({ node: null, role, full, wx, wy, wMax, minZoom, align });
  }

  // ───────── the static map ─────────

  function dropHi(v: BuildingView): void {
    for (const sp of v.hi ?? []) sp.destroy();
    for (const t of v.hiTex) t.destroy(true);
    v.hi = null;
    v.hiTex = [];
    v.lo.visible = true;
  }

  function clearWorld(): void {
    clearPatrolVisuals();
    for (const l of labels) l.node?.destroy();
    labels = [];
    for (const v of views) {
      dropHi(v);
      v.loTex.destroy(true);
    }
    views = [];
    ground.removeChildren().forEach((c) => c.destroy({ children: true }));
    buildingsLayer.removeChildren().forEach((c) => c.destroy({ children: true }));
    decoLayer.removeChildren().forEach((c) => c.destroy());
  }

  /** Full-resolution pixels of one building (sliced into ≤ 2048 px textures). */
  function paintHi(v: BuildingView): void {
    const T = TILE;
    const b = v.b;
    const full = paintBuilding(b);
    const MAXTEX = 2048;
    v.hi = [];
    for (let cy = 0; cy < full.height; cy += MAXTEX) {
      for (let cx = 0; cx < full.width; cx += MAXTEX) {
        let piece = full;
        if (full.width > MAXTEX || full.height > MAXTEX) {
          piece = makeCanvas(Math.min(MAXTEX, full.width - cx), Math.min(MAXTEX, full.height - cy));
          piece.getContext('2d')!.drawImage(full, -cx, -cy);
        }
        const t = Texture.from(piece, true);
        t.source.scaleMode = smoothNow ? 'linear' : 'nearest';
        v.hiTex.push(t);
        const sp = new Sprite(t);
        sp.position.set(b.x * T + cx, b.y * T + cy);
        v.holder.addChild(sp);
        v.hi.push(sp);
      }
    }
    v.lo.visible = false;
  }

  /**
   * Level of detail: every building has a quarter-resolution picture; full-resolution pixels are
   * painted (a few per frame) only for buildings in view when zoomed in, and dropped when far away,
   * so a village of many big repositories stays within a modest amount of GPU memory.
   */
  function updateDetail(budgetMs: number): void {
    if (views.length === 0) return;
    const z = cam.zoom;
    const T = TILE * z;
    const ox = Math.round(cam.x);
    const oy = Math.round(cam.y);
    const vw = viewW();
    const vh = viewH();
    const near = (v: BuildingView, m: number) =>
      ox + (v.b.x + v.b.w) * T > -m * vw && ox + v.b.x * T < vw * (1 + m) && oy + (v.b.y + v.b.h) * T > -m * vh && oy + v.b.y * T < vh * (1 + m);
    const start = performance.now();
    for (const v of views) {
      const want = z >= HI_DETAIL_ZOOM && near(v, 0.25);
      if (want && !v.hi) {
        if (performance.now() - start > budgetMs) continue;
        paintHi(v);
      } else if (v.hi && (z < HI_DETAIL_ZOOM * 0.8 || !near(v, 1))) {
        dropHi(v);
      }
    }
  }

  function buildWorld(): void {
    if (!layout) return;
    clearWorld();
    const T = TILE;
    const L = layout;
    const roadEdges = new Graphics();
    for (const r of L.roads) {
      const road = new TilingSprite({ texture: tex.tile('path'), width: r.w * T, height: r.h * T });
      road.tilePosition.set(-r.x * T, -r.y * T);
      road.position.set(r.x * T, r.y * T);
      ground.addChild(road);
      if (r.h > 1 || r.w > 1) {
        roadEdges.rect(r.x * T, r.y * T, r.w * T, 1).rect(r.x * T, (r.y + r.h) * T - 1, r.w * T, 1);
        roadEdges.rect(r.x * T, r.y * T, 1, r.h * T).rect((r.x + r.w) * T - 1, r.y * T, 1, r.h * T);
      }
    }
    roadEdges.fill({ color: PALETTE.pathDark });
    ground.addChild(roadEdges);

    // Buildings: a drop shadow, then the floor plan (see updateDetail).
    const shadows = new Graphics();
    for (const b of L.buildings) shadows.rect(b.x * T + 4, b.y * T + 5, b.w * T, b.h * T);
    shadows.fill({ color: 0x1a1420, alpha: 0.25 });
    buildingsLayer.addChild(shadows);
    for (const b of L.buildings) {
      const holder = new Container({ label: `building:${b.repoId}` });
      const loTex = Texture.from(paintBuilding(b, LO_SCALE), true);
      loTex.source.scaleMode = 'linear';
      const lo = new Sprite(loTex);
      lo.position.set(b.x * T, b.y * T);
      lo.scale.set(1 / LO_SCALE);
      holder.addChild(lo);
      buildingsLayer.addChild(holder);
      views.push({ b, holder, lo, loTex, hi: null, hiTex: [] });

      // Labels: room name plates, "+N more" notes; a construction lot's name and status.
      if (b.kind === 'construction') {
        const repo = repos.find((r) => r.id === b.repoId);
        const status = repo?.status === 'error' ? 'scan failed' : repo?.status === 'ready' ? 'no tree yet' : 'scanning…';
        addLabel('title', b.name, (b.x + b.w / 2) * T, (b.y + 1.5) * T, (b.w - 1) * T, 0, 'center');
        addLabel('note', status, (b.x + b.w / 2) * T, (b.y + b.h - 2.2) * T, (b.w - 1) * T, 0.75, 'center');
      } else if (b.kind === 'workshop') {
        const r = b.rooms[0]!;
        const n = b.agents ?? 0;
        addLabel('title', b.name, r.plate.x * T + 4, (r.plate.y + 0.5) * T, (b.w - 2) * T - 6, 0);
        addLabel('note', `${n} agent${n === 1 ? '' : 's'}`, (b.x + b.w / 2) * T, (b.y + 6.5) * T, (b.w - 4) * T, 0.5, 'center');
      } else {
        for (const r of b.rooms) {
          const isRoot = r.parent === null;
          const minZoom = r.depth === 0 ? 0 : r.depth === 1 ? 0.35 : r.depth === 2 ? 0.6 : 0.9;
          addLabel(isRoot ? 'title' : 'label', r.name, r.plate.x * T + 4, (r.plate.y + 0.5) * T, (r.w - 2) * T - 6, minZoom);
          if (r.note) addLabel('note', r.note.text, (r.note.x + r.note.w) * T - 3, (r.note.y + 0.5) * T, r.note.w * T, 1, 'right');
        }
      }
    }
    placeDecorations();
    labelsZoom = -1;
    emptyText.visible = L.buildings.length === 0;
    drawHighlight();
    drawPatrolState();
  }

  /** Trees and bushes on free grass, deterministic. */
  function placeDecorations(): void {
    if (!layout) return;
    const L = layout;
    const blocked = [
      ...L.buildings.map((b) => ({ x: b.x - 1, y: b.y - 2, w: b.w + 2, h: b.h + 3 })),
      ...L.roads.map((r) => ({ x: r.x - 1, y: r.y - 1, w: r.w + 2, h: r.h + 2 })),
    ];
    const free = (x: number, y: number) => !blocked.some((r) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h);
    const ring = 8;
    // Thin the forest out on very large villages (at most a few thousand props).
    const cells = (L.width + 2 * ring) * (L.height + 2 * ring);
    const density = Math.min(1, 60000 / Math.max(1, cells));
    for (let y = -ring; y < L.height + ring; y++) {
      for (let x = -ring; x < L.width + ring; x++) {
        const outside = x < 0 || y < 0 || x >= L.width || y >= L.height;
        const h = noise(x, y, 4242);
        const tree = outside ? h < 0.14 * density : h < 0.025 * density;
        const bush = !tree && (outside ? h > 1 - 0.04 * density : h > 1 - 0.015 * density);
        if ((!tree && !bush) || !free(x, y)) continue;
        // Trees stand at least a tile away from roads and buildings, so walkers never pass behind
        // them: they can live in an unsorted layer under the sprites.
        const s = new Sprite(tex.prop(tree ? 'tree' : 'bush'));
        s.anchor.set(0.5, 1);
        s.position.set((x + 0.5) * TILE, (y + 1) * TILE);
        decoLayer.addChild(s);
      }
    }
  }

  function drawHighlight(): void {
    highlight.clear();
    if (!layout || !selectedRoom) return;
    const r = roomByPath(layout, selectedRoom.repoId, selectedRoom.roomPath) ?? roomFor(layout, selectedRoom.repoId, selectedRoom.roomPath);
    if (!r) return;
    const T = TILE;
    highlight.rect(r.x * T + T, r.y * T + T, (r.w - 2) * T, (r.h - 2) * T).fill({ color: 0xffe08a, alpha: 0.14 });
    highlight.rect(r.x * T - 1, r.y * T - 1, r.w * T + 2, r.h * T + 2).stroke({ width: 3, color: 0xffd75e, alignment: 0.5 });
    highlight.rect(r.x * T - 3, r.y * T - 3, r.w * T + 6, r.h * T + 6).stroke({ width: 1, color: PALETTE.outline, alignment: 0.5, alpha: 0.6 });
  }

  // ───────── patrol results: bugs, health bars, smoke ─────────

  /** Colour of a health bar: green when healthy, yellow when it slips, red when patrols fail. */
  const healthColor = (h: number) => (h >= 0.8 ? 0x7bc47f : h >= 0.5 ? PALETTE.yellow : PALETTE.red);
  /** Puffs per smoking building, and how long one takes to rise and fade. */
  const PUFFS = 8;
  const PUFF_MS = 2400;

  function clearPatrolVisuals(): void {
    for (const b of bugs.values()) {
      b.sprite.destroy();
      b.ring.destroy();
    }
    bugs.clear();
    for (const sm of smoke.values()) for (const p of sm.sprites) p.destroy();
    smoke.clear();
    for (const t of healthTexts.values()) t.node.destroy();
    healthTexts.clear();
    healthLayer.clear();
  }

  /** Rebuilds bugs, bars and smoke from the alerts and health (cheap: a handful of nodes). */
  function drawPatrolState(): void {
    clearPatrolVisuals();
    if (!layout) return;
    const L = layout;
    const T = TILE;
    // Bugs: per room, in a stable order, on the room's free floor tiles.
    const byRoom = new Map<string, { room: RoomLayout; ids: string[] }>();
    for (const a of alerts) {
      if (a.state !== 'open') continue;
      const room = roomFor(L, a.repo_id, a.room_path);
      if (!room) continue;
      const key = `${room.repoId}|${room.path}`;
      const entry = byRoom.get(key) ?? { room, ids: [] };
      entry.ids.push(a.id);
      byRoom.set(key, entry);
    }
    for (const { room, ids } of byRoom.values()) {
      ids.sort();
      const spots = bugSpotsFor(L, room, ids.length);
      ids.forEach((id, i) => {
        const sprite = new Sprite(tex.bug[0]);
        sprite.anchor.set(0.5, 0.5);
        sprite.position.set((spots[i]!.x + 0.5) * T, (spots[i]!.y + 0.5) * T);
        const ring = new Graphics().circle(0, 0, 9).fill({ color: 0xffd75e, alpha: 0.3 }).stroke({ width: 1.5, color: 0xffd75e });
        ring.position.copyFrom(sprite.position);
        ring.visible = id === selectedAlert;
        bugsLayer.addChild(ring, sprite);
        bugs.set(id, { sprite, ring, room: room.path, phase: hashString(id) % 600 });
      });
    }
    // Health bars over the buildings, and smoke where the build fails.
    for (const b of L.buildings) {
      if (b.kind !== 'building') continue;
      const h = healthByRepo.get(b.repoId);
      if (h && h.health !== null) {
        const w = Math.min(b.w * T, 10 * T);
        const x = b.x * T;
        const y = b.y * T - 12;
        healthLayer.rect(x - 1, y - 1, w + 2, 8).fill({ color: PALETTE.outline });
        healthLayer.rect(x, y, w, 6).fill({ color: 0x3a3236 });
        // Even 0 % shows a red sliver: an empty bar would read as "no data".
        const filled = Math.max(3, Math.round(w * h.health));
        healthLayer.rect(x, y, filled, 6).fill({ color: healthColor(h.health) });
        healthLayer.rect(x, y, filled, 1).fill({ color: 0xffffff, alpha: 0.25 });
        const node = new BitmapText({ text: `health ${Math.round(h.health * 100)}%`, style: { fontFamily: fontName('note', 0), fontSize: FONT_SIZES.note[0] } });
        overlay.addChild(node);
        healthTexts.set(b.repoId, { node, wx: x + w + 6, wy: y + 3 });
      }
      if (h?.build_failing) {
        const sprites: Sprite[] = [];
        for (let i = 0; i < PUFFS; i++) {
          const p = new Sprite(tex.puff);
          p.anchor.set(0.5, 0.5);
          smokeLayer.addChild(p);
          sprites.push(p);
        }
        smoke.set(b.repoId, { sprites, x: (b.x + b.w - 2.5) * T, y: (b.y + 0.5) * T });
      }
    }
    positionPatrolOverlay();
    animatePatrol();
  }

  /** Health labels live in the unscaled overlay: placed again whenever the camera moves. */
  function positionPatrolOverlay(): void {
    const z = cam.zoom;
    const tier = tierFor(z);
    for (const t of healthTexts.values()) {
      t.node.visible = z >= 0.35;
      if (t.node.style.fontFamily !== fontName('note', tier)) {
        t.node.style.fontFamily = fontName('note', tier);
        t.node.style.fontSize = FONT_SIZES.note[tier];
      }
      t.node.position.set(Math.round(t.wx * z), Math.round(t.wy * z - FONT_SIZES.note[tier] * 0.62));
    }
    const k = spriteScale();
    for (const b of bugs.values()) {
      b.sprite.scale.set(k);
      b.ring.scale.set(k);
    }
  }

  /** Bugs wiggle their legs; smoke rises and fades (at whatever rate the village draws). */
  function animatePatrol(): void {
    for (const b of bugs.values()) b.sprite.texture = tex.bug[Math.floor((time + b.phase) / 320) % 2]!;
    // Zoomed out, smoke keeps its on-screen size like the sprites do.
    const k = spriteScale();
    for (const sm of smoke.values()) {
      sm.sprites.forEach((p, i) => {
        const t = ((time + (i * PUFF_MS) / PUFFS) % PUFF_MS) / PUFF_MS;
        p.position.set(sm.x + (Math.sin(t * 5 + i) * 5 + t * 14) * k, sm.y - t * 64 * k);
        p.scale.set((1.4 + t * 3) * k);
        p.alpha = 0.95 * (1 - t * t);
      });
    }
  }

  function bugAt(sx: number, sy: number): string | null {
    const wx = (sx - Math.round(cam.x)) / cam.zoom;
    const wy = (sy - Math.round(cam.y)) / cam.zoom;
    const r = (7 * spriteScale()) + 2 / cam.zoom;
    let best: string | null = null;
    let bestD = Infinity;
    for (const [id, b] of bugs) {
      const d = Math.hypot(wx - b.sprite.x, wy - b.sprite.y);
      if (d <= r && d < bestD) {
        best = id;
        bestD = d;
      }
    }
    return best;
  }

  // ───────── sprites ─────────

  function tileToWorld(p: Point): { x: number; y: number } {
    return { x: (p.x + 0.5) * TILE, y: (p.y + FEET_Y) * TILE };
  }

  function makeActor(s: SessionSummary, start: Point): Actor {
    const node = new Container({ label: `session:${s.id}` });
    const ring = new Graphics().ellipse(0, 0, 9, 4).fill({ color: 0xffd75e, alpha: 0.35 }).stroke({ width: 1.5, color: 0xffd75e });
    ring.visible = false;
    const shadow = new Sprite(tex.shadow);
    shadow.anchor.set(0.5, 0.5);
    const frames = tex.walk(s.id, s.kind);
    const body = new Sprite(frames.down[0]);
    body.anchor.set(0.5, 1);
    body.y = 1;
    const bubble = new Sprite(tex.bubble.input);
    bubble.anchor.set(0.5, 1);
    bubble.position.set(0, -19);
    bubble.visible = false;
    node.addChild(ring, shadow, body, bubble);
    actorsLayer.addChild(node);
    const a: Actor = {
      id: s.id,
      repoId: s.repo_id,
      kind: s.kind,
      node,
      body,
      bubble,
      ring,
      frames,
      dir: 'up',
      frameT: 0,
      pos: { ...start },
      walk: null,
      walkIdx: 0,
      speed: 4,
      home: [start],
      roomPath: null,
      spotKey: '',
      title: s.title,
      state: s.state,
      reason: s.reason,
      activity: s.activity,
      activitySince: s.activity_since,
      activityDetail: s.activity_detail,
      failedAt: null,
      leaving: false,
      fade: 0,
      appear: true,
    };
    placeActor(a);
    return a;
  }

  function currentHistory(a: Actor): Point[] {
    if (a.walk && a.walkIdx < a.walk.points.length) return [...a.walk.bases[a.walkIdx], { ...a.pos }];
    return a.home;
  }

  function walkTo(a: Actor, route: Point[]): void {
    const walk = planWalk(currentHistory(a), route);
    let len = 0;
    let prev = a.pos;
    for (const p of walk.points) {
      len += dist(prev, p);
      prev = p;
    }
    a.walk = walk;
    a.walkIdx = 0;
    a.speed = Math.max(4, Math.min(60, len / 4)); // tiles per second: a trip takes at most ~4 s
    a.home = route;
  }

  function leave(a: Actor): void {
    if (a.leaving || !layout) {
      a.leaving = true;
      return;
    }
    a.leaving = true;
    a.roomPath = null;
    const b = buildingFor(layout, a.repoId);
    if (!b) {
      a.walk = null;
      return;
    }
    walkTo(a, [b.entrance, { x: b.entrance.x, y: b.entrance.y + 1 }]);
  }

  function updateBubble(a: Actor): void {
    const kind = bubbleFor(a);
    a.bubble.visible = kind !== null && !(a.leaving && a.state !== 'FAILED');
    if (kind) a.bubble.texture = tex.bubble[kind];
  }

  function setSessions(sessions: readonly SessionSummary[]): void {
    lastSessions = sessions;
    if (!layout) return;
    const L = layout;
    const now = time;
    const present = new Set<string>();
    // Who stands where: rank within the room, by id (deterministic spots).
    const inRoom = new Map<string, string[]>();
    const roomOf = new Map<string, RoomLayout>();
    for (const s of sessions) {
      const a = actors.get(s.id);
      const shown = a ? !a.leaving : spawnsSprite(s);
      if (!shown || s.state === 'COMPLETED') continue;
      const room = roomFor(L, s.repo_id, s.room_path);
      if (!room) continue;
      roomOf.set(s.id, room);
      const key = `${room.repoId}|${room.path}`;
      const list = inRoom.get(key) ?? [];
      list.push(s.id);
      inRoom.set(key, list);
    }
    for (const list of inRoom.values()) list.sort();

    for (const s of sessions) {
      present.add(s.id);
      let a = actors.get(s.id);
      const room = roomOf.get(s.id);
      if (a && (s.state === 'COMPLETED' || !room || a.repoId !== s.repo_id)) {
        a.state = s.state;
        a.reason = s.reason;
        a.activity = s.activity;
        a.activitySince = s.activity_since;
        a.activityDetail = s.activity_detail;
        leave(a);
        actors.delete(s.id);
        leavingActors.add(a);
        updateBubble(a);
        a = undefined;
        if (s.state === 'COMPLETED' || !room) continue;
      }
      if (!room) continue;
      const b = buildingFor(L, s.repo_id)!;
      if (!a) {
        a = makeActor(s, b.entrance);
        actors.set(s.id, a);
      }
      a.title = s.title;
      a.state = s.state;
      a.reason = s.reason;
      a.activity = s.activity;
      a.activitySince = s.activity_since;
      a.activityDetail = s.activity_detail;
      if (s.state === 'FAILED' && a.failedAt === null) a.failedAt = now;
      const idx = inRoom.get(`${room.repoId}|${room.path}`)!.indexOf(s.id);
      const spotKey = `${room.repoId}|${room.path}|${idx}`;
      a.roomPath = room.path;
      if (a.spotKey !== spotKey) {
        a.spotKey = spotKey;
        walkTo(a, routeTo(L, room, idx));
      }
      updateBubble(a);
    }
    for (const [id, a] of actors) {
      if (present.has(id)) continue;
      leave(a);
      actors.delete(id);
      leavingActors.add(a);
      updateBubble(a);
    }
    updateSelectionVisuals();
  }

  function removeActor(a: Actor): void {
    leavingActors.delete(a);
    if (actors.get(a.id) === a) actors.delete(a.id);
    a.node.destroy({ children: true });
  }

  /** Below zoom 1 sprites keep their on-screen size (16×24 px), so agents stay visible in the overview. */
  const spriteScale = () => Math.max(1, 1 / cam.zoom);

  function placeActor(a: Actor): void {
    const w = tileToWorld(a.pos);
    a.node.scale.set(spriteScale());
    a.node.position.set(Math.round(w.x), Math.round(w.y));
    a.node.zIndex = w.y + 0.01;
  }

  function stepActor(a: Actor, dt: number): boolean {
    // Returns false when the actor is finished and removed.
    if (a.appear) {
      a.fade = Math.min(1, a.fade + dt / 300);
      if (a.fade >= 1) a.appear = false;
    }
    let moving = false;
    if (a.walk && a.walkIdx < a.walk.points.length) {
      let budget = (a.speed * dt) / 1000;
      while (budget > 0 && a.walkIdx < a.walk.points.length) {
        const target = a.walk.points[a.walkIdx];
        const dx = target.x - a.pos.x;
        const dy = target.y - a.pos.y;
        const d = Math.abs(dx) + Math.abs(dy);
        if (d > 1e-6) {
          a.dir = Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? 'right' : 'left') : dy > 0 ? 'down' : 'up';
          moving = true;
        }
        if (d <= budget) {
          a.pos = { x: target.x, y: target.y };
          budget -= d;
          a.walkIdx++;
        } else {
          // Axis-aligned segments: move along the one axis that differs (x first if both do).
          if (Math.abs(dx) > 1e-6) a.pos = { x: a.pos.x + Math.sign(dx) * Math.min(budget, Math.abs(dx)), y: a.pos.y };
          else a.pos = { x: a.pos.x, y: a.pos.y + Math.sign(dy) * budget };
          budget = 0;
        }
      }
      if (a.walkIdx >= a.walk.points.length) a.walk = null;
    }
    if (moving) {
      a.frameT += dt;
      a.body.texture = a.frames[a.dir][Math.floor(a.frameT / WALK_FRAME_MS) % 4];
    } else {
      a.frameT = 0;
      if (!a.leaving) a.dir = 'down';
      a.body.texture = a.frames[a.dir][0];
    }
    // Bubble bob: one pixel, slowly.
    a.bubble.y = -19 - (Math.floor((time + (hashString(a.id) % 1000)) / 450) % 2);
    if (a.failedAt !== null && !a.leaving && time - a.failedAt > FAILED_LINGER_MS) {
      leave(a);
      actors.delete(a.id);
      leavingActors.add(a);
    }
    if (a.leaving && !a.walk) {
      a.fade -= dt / 350;
      if (a.fade <= 0) {
        removeActor(a);
        return false;
      }
    }
    a.node.alpha = Math.max(0, Math.min(1, a.fade));
    placeActor(a);
    return true;
  }

  function updateSelectionVisuals(): void {
    for (const a of actors.values()) a.ring.visible = a.id === selectedSession;
    const a = selectedSession ? actors.get(selectedSession) : undefined;
    if (!a) {
      selTitle.visible = false;
      return;
    }
    const text = `${a.title || a.id} · ${statusText(a)}`;
    const tier = tierFor(cam.zoom);
    const key = `${text}|${tier}`;
    if (key !== selTitleKey) {
      selTitleKey = key;
      selTitleText.style.fontFamily = fontName('label', tier);
      selTitleText.style.fontSize = FONT_SIZES.label[tier];
      selTitleText.text = text.length > 60 ? `${text.slice(0, 59)}…` : text;
      const w = Math.ceil(selTitleText.width) + 8;
      const h = Math.ceil(selTitleText.height) + 2;
      selTitleBg.clear().roundRect(0, 0, w, h, 3).fill({ color: PALETTE.outline, alpha: 0.82 }).stroke({ width: 1, color: 0xffd75e });
      selTitleText.position.set(4, 1);
    }
    if (!selTitle.parent) overlay.addChild(selTitle);
    selTitle.visible = true;
  }

  // ───────── input ─────────

  const local = (e: { clientX: number; clientY: number }) => {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };

  function actorAt(sx: number, sy: number): Actor | null {
    const wx = (sx - Math.round(cam.x)) / cam.zoom;
    const wy = (sy - Math.round(cam.y)) / cam.zoom;
    const k = spriteScale();
    const tol = 2 / cam.zoom;
    let best: Actor | null = null;
    for (const a of actors.values()) {
      if (a.leaving) continue;
      const fx = a.node.x;
      const fy = a.node.y;
      const top = fy - (a.bubble.visible ? 31 : 21) * k;
      if (wx >= fx - 7 * k - tol && wx <= fx + 7 * k + tol && wy >= top - tol && wy <= fy + 2 * k + tol) {
        if (!best || fy > best.node.y) best = a;
      }
    }
    return best;
  }

  function clickAt(sx: number, sy: number): void {
    if (!layout) return;
    const a = actorAt(sx, sy);
    if (a) {
      callbacks().onSelectSession(a.id);
      return;
    }
    const bug = bugAt(sx, sy);
    if (bug) {
      callbacks().onSelectAlert(bug);
      return;
    }
    const wx = (sx - Math.round(cam.x)) / cam.zoom;
    const wy = (sy - Math.round(cam.y)) / cam.zoom;
    const r = roomAt(layout, wx / TILE, wy / TILE);
    if (r) callbacks().onSelectRoom(r.repoId, r.path);
  }

  let drag: { id: number; sx: number; sy: number; lx: number; ly: number; moved: boolean } | null = null;
  const onPointerDown = (e: PointerEvent) => {
    if (e.button !== 0 && e.pointerType === 'mouse') return;
    const p = local(e);
    drag = { id: e.pointerId, sx: p.x, sy: p.y, lx: p.x, ly: p.y, moved: false };
    try {
      canvas.setPointerCapture(e.pointerId);
    } catch {
      /* synthetic events */
    }
    host.focus({ preventScroll: true });
  };
  const onPointerMove = (e: PointerEvent) => {
    const p = local(e);
    if (drag && drag.id === e.pointerId) {
      if (!drag.moved && Math.hypot(p.x - drag.sx, p.y - drag.sy) > DRAG_THRESHOLD) {
        drag.moved = true;
        canvas.style.cursor = 'grabbing';
      }
      if (drag.moved) panBy(p.x - drag.lx, p.y - drag.ly);
      drag.lx = p.x;
      drag.ly = p.y;
      return;
    }
    canvas.style.cursor = actorAt(p.x, p.y) || bugAt(p.x, p.y) ? 'pointer' : 'default';
  };
  const onPointerUp = (e: PointerEvent) => {
    if (!drag || drag.id !== e.pointerId) return;
    const d = drag;
    drag = null;
    canvas.style.cursor = 'default';
    if (!d.moved) {
      const p = local(e);
      clickAt(p.x, p.y);
    }
  };
  const onPointerCancel = () => {
    drag = null;
    canvas.style.cursor = 'default';
  };
  let wheelAcc = 0;
  const onWheel = (e: WheelEvent) => {
    e.preventDefault();
    const dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaMode === 2 ? e.deltaY * 400 : e.deltaY;
    wheelAcc += dy;
    const p = local(e);
    if (Math.abs(wheelAcc) >= 50) {
      zoomAt(p.x, p.y, wheelAcc < 0 ? 1 : -1);
      wheelAcc = 0;
    }
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const step = 64;
    let handled = true;
    switch (e.key) {
      case 'ArrowLeft':
        panBy(step, 0);
        break;
      case 'ArrowRight':
        panBy(-step, 0);
        break;
      case 'ArrowUp':
        panBy(0, step);
        break;
      case 'ArrowDown':
        panBy(0, -step);
        break;
      case '+':
      case '=':
        zoomAt(viewW() / 2, viewH() / 2, 1);
        break;
      case '-':
      case '_':
        zoomAt(viewW() / 2, viewH() / 2, -1);
        break;
      case '0':
        userMoved = false;
        fit();
        break;
      default:
        handled = false;
    }
    if (handled) e.preventDefault();
  };
  canvas.addEventListener('pointerdown', onPointerDown);
  canvas.addEventListener('pointermove', onPointerMove);
  canvas.addEventListener('pointerup', onPointerUp);
  canvas.addEventListener('pointercancel', onPointerCancel);
  canvas.addEventListener('wheel', onWheel, { passive: false });
  host.addEventListener('keydown', onKeyDown);

  const resizeObserver = new ResizeObserver(() => {
    app.resize();
    if (!fitted || !userMoved) fit();
    else applyCamera();
  });
  resizeObserver.observe(host);

  // ───────── the frame loop ─────────

  // A still village needs few frames: drawing 60 per second on a software-rendered canvas takes
  // the CPU the terminal needs. Full rate while anything moves or the person interacts.
  const BUSY_FPS = 60;
  const IDLE_FPS = 12;
  const INTERACTION_BUSY_MS = 1_500;
  let lastInteraction = -Infinity;
  const markInteraction = () => {
    lastInteraction = time;
    app.ticker.maxFPS = BUSY_FPS;
  };
  for (const type of ['pointerdown', 'pointermove', 'wheel'] as const) canvas.addEventListener(type, markInteraction, { passive: true });
  host.addEventListener('keydown', markInteraction);

  const tick = () => {
    const dt = Math.min(100, app.ticker.deltaMS);
    time += dt;
    let busy = leavingActors.size > 0 || time - lastInteraction < INTERACTION_BUSY_MS;
    for (const a of [...actors.values(), ...leavingActors]) {
      stepActor(a, dt);
      if (a.walk || a.appear) busy = true;
    }
    app.ticker.maxFPS = busy ? BUSY_FPS : IDLE_FPS;
    animatePatrol();
    updateDetail(12); // paint missing building pixels, a few milliseconds per frame
    const sel = selectedSession ? actors.get(selectedSession) : undefined;
    if (sel && selTitle.visible) {
      const z = cam.zoom;
      const top = sel.node.y - (sel.bubble.visible ? 33 : 23) * spriteScale();
      selTitle.position.set(Math.round(sel.node.x * z - selTitle.width / 2), Math.round(top * z - selTitle.height - 2));
    }
    if (framesSinceWorld >= 0 && !ready) {
      framesSinceWorld++;
      if (framesSinceWorld >= 2) {
        ready = true;
        host.dataset.ready = 'true';
      }
    }
  };
  app.ticker.add(tick);

  // ───────── debug API ─────────

  const api: VillageDebugApi = {
    get ready() {
      return ready;
    },
    get zoom() {
      return cam.zoom;
    },
    spriteScreenPosition(id) {
      const a = actors.get(id);
      if (!a) return null;
      return worldToClient(a.node.x, a.node.y - 11 * spriteScale());
    },
    spriteRoom(id) {
      return actors.get(id)?.roomPath ?? null;
    },
    spriteBubble(id) {
      const a = actors.get(id);
      return a && a.bubble.visible ? bubbleFor(a) : null;
    },
    alertRoom(id) {
      return bugs.get(id)?.room ?? null;
    },
    alertScreenPosition(id) {
      const b = bugs.get(id);
      return b ? worldToClient(b.sprite.x, b.sprite.y) : null;
    },
    health(repoId) {
      return healthTexts.has(repoId) ? (healthByRepo.get(repoId)?.health ?? null) : null;
    },
    smoking(repoId) {
      return smoke.has(repoId);
    },
    roomScreenPosition(repoId, roomPath) {
      if (!layout) return null;
      const r = roomByPath(layout, repoId, roomPath);
      if (!r) return null;
      // A wall tile of this room (walls belong to the room itself, not to a child) where no sprite
      // stands, preferably on screen: the top wall right of the name plate first, then the others.
      const cands: Point[] = [];
      for (let x = r.x + r.w - 2; x > r.x; x--) cands.push({ x, y: r.y });
      for (let y = r.y + 1; y < r.y + r.h - 1; y++) cands.push({ x: r.x, y }, { x: r.x + r.w - 1, y });
      for (let x = r.x + 1; x < r.x + r.w - 1; x++) if (x !== r.door.x) cands.push({ x, y: r.y + r.h - 1 });
      const rect = canvas.getBoundingClientRect();
      let fallback: { x: number; y: number } | null = null;
      for (const c of cands) {
        const p = worldToClient((c.x + 0.5) * TILE, (c.y + 0.5) * TILE);
        if (actorAt(p.x - rect.left, p.y - rect.top)) continue;
        if (roomAt(layout, c.x + 0.5, c.y + 0.5) !== r) continue;
        fallback ??= p;
        if (p.x >= rect.left && p.x < rect.right && p.y >= rect.top && p.y < rect.bottom) return p;
      }
      return fallback ?? worldToClient((r.x + r.w / 2) * TILE, (r.y + 0.5) * TILE);
    },
  };

  return {
    setWorld(next, nextRepos) {
      repos = nextRepos;
      if (next === layout) return;
      layout = next;
      buildWorld();
      // Existing sprites: the geometry changed, so they stand at their new spots right away
      // (sprites seen for the first time walk in from the entrance).
      for (const a of [...leavingActors]) removeActor(a);
      const existing = new Set(actors.values());
      for (const a of existing) {
        a.spotKey = '';
        a.walk = null;
        const b = buildingFor(next, a.repoId);
        if (b) {
          a.pos = { ...b.entrance };
          a.home = [b.entrance];
        }
      }
      setSessions(lastSessions);
      for (const a of existing) {
        if (a.walk && a.walk.points.length) {
          a.pos = { ...a.walk.points[a.walk.points.length - 1] };
          a.walk = null;
          a.appear = false;
          a.fade = 1;
        }
      }
      if (!fitted || !userMoved) fit();
      else applyCamera();
      updateDetail(400); // the first screen at once (within reason), the rest over the next frames
      if (framesSinceWorld < 0) framesSinceWorld = 0;
    },
    setSessions,
    debugApi: api,
    setSelection(sessionId, room) {
      selectedSession = sessionId;
      const changed = room?.repoId !== selectedRoom?.repoId || room?.roomPath !== selectedRoom?.roomPath;
      selectedRoom = room;
      if (changed) drawHighlight();
      updateSelectionVisuals();
    },
    setPatrolState(nextAlerts, nextHealth) {
      alerts = nextAlerts;
      healthByRepo.clear();
      for (const h of nextHealth) healthByRepo.set(h.repo_id, h);
      drawPatrolState();
    },
    setSelectedAlert(id) {
      selectedAlert = id;
      for (const [bid, b] of bugs) b.ring.visible = bid === id;
    },
    fit,
    destroy() {
      if (destroyed) return;
      destroyed = true;
      resizeObserver.disconnect();
      canvas.removeEventListener('pointerdown', onPointerDown);
      canvas.removeEventListener('pointermove', onPointerMove);
      canvas.removeEventListener('pointerup', onPointerUp);
      canvas.removeEventListener('pointercancel', onPointerCancel);
      canvas.removeEventListener('wheel', onWheel);
      host.removeEventListener('keydown', onKeyDown);
      for (const type of ['pointerdown', 'pointermove', 'wheel'] as const) canvas.removeEventListener(type, markInteraction);
      host.removeEventListener('keydown', markInteraction);
      if (window.__village === api) delete window.__village;
      if (ready) delete host.dataset.ready;
      app.ticker.remove(tick);
      clearWorld();
      app.destroy({ removeView: true }, { children: true });
      tex.destroy();
    },
  };
}

/**
 * The pixi side of the village, wired together: the camera, the static map (cached chunks), the
 * patrol overlay, the actors drawn from the pure simulation, crowd badges, input and the
 * on-demand frame loop. Loaded with a dynamic import from Village.tsx (browser only); React feeds
 * it the layout, sessions and selection.
 *
 * Where a sprite's position comes from: `stepActors` in ./simulation.ts (pure); ActorsLayer only
 * draws that state.
 *
 * ## Mark dirty → render (how a layer fits in)
 * Two canvases, one over the other:
 * - the **static surface** (./static-surface.ts, below): what only changes with the layout, the
 *   zoom or a selection — ground, buildings, room name plates, the room highlight. Its nodes live
 *   in `surface.world` (world px, scaled) or `surface.labels` (screen px). A layer whose picture
 *   changed calls `surface.invalidate()` and then `loop.request()`; the next frame redraws the
 *   surface once. Panning only moves it (CSS), so nothing here may change per frame.
 * - the **moving canvas** (`app`, transparent, on top): sprites, bubbles, bugs, smoke, health
 *   bars, the selected sprite's name tag — added to `world` (world px) or `overlay` (screen px).
 *   It is drawn only in frames somebody asked for: `loop.request()` for the next frame,
 *   `loop.requestIn(ms)` for a slow animation (return the wait from your layer's per-frame
 *   method, as ActorsLayer.sync and PatrolLayer.animate do). With nobody asking, no frame is
 *   drawn and the page is idle. Slow animations that decorate a lasting state (a bubble's bob,
 *   a bug's legs, smoke) play on one shared beat, and only for a few seconds after the village
 *   last changed (./ambient.ts); a setter that changes what is drawn calls `poke()`.
 * A new overlay (a radar line, a DTA worker, a "replaying" badge) that moves or animates belongs
 * on the moving canvas; one that sits still for minutes may go on the surface. Never draw large
 * areas on the moving canvas: a software renderer pays for every pixel, every frame.
 */
import { Application, BitmapText, Container, Ticker, type Renderer } from 'pixi.js';
import type { RepoSummary, SessionSummary } from '../../../protocol/ui';
import { TILE, roomAt, roomByPath, type VillageLayout } from '../layout';
import { BACKGROUND, createTextures } from '../sprites';
import { ActorsLayer } from './actors-layer';
import { ambientPlays } from './ambient';
import { Camera } from './camera';
import { DETAIL_BUDGET_MS, FIRST_DETAIL_BUDGET_MS } from './constants';
import { CrowdBadges } from './crowd-badges';
import { RoomTrails, createDebugApi } from './debug-api';
import { Arrivals } from './arrivals';
import { FrameLoop } from './frame-loop';
import { attachInput } from './input';
import { FONT_SIZES, Labels, fontName, installFonts } from './labels';
import { MapLayer } from './map-layer';
import { PatrolLayer } from './patrol-layer';
import { QuestBanners } from './quest-banners';
import { StaticSurface } from './static-surface';
import { RadarLayer } from './radar-layer';
import { MAX_STEP_MS, actorsChanged, initialSimState, stepActors, type SimState } from './simulation';
import type { EngineCallbacks, FrameTimes, VillageEngine } from './types';

export type { EngineCallbacks, VillageDebugApi, VillageEngine } from './types';
export { ZOOMS } from './constants';

/** Textures one batched draw call may sample (see the comment where it is set). */
const MAX_BATCH_TEXTURES = 4;
/** Frames to draw after the first world before the village reports itself ready (painted, not just built). */
const READY_AFTER_FRAMES = 2;
/** A sleeping loop catches the simulation up in steps, but at most this much (a tab asleep for an hour). */
const MAX_CATCH_UP_MS = 10_000;
/** A slow frame advances the simulation by its real duration, up to this (a frozen tab does not teleport walkers). */
const MAX_FRAME_STEP_MS = 1_000;
/** While measuring, the camera pans this many px per frame by default (so every frame really draws). */
const MEASURE_PAN_PX = 2;
const MEASURE_FLIP_FRAMES = 60;

/**
 * Fewer textures per batch: pixi's batch shader picks its texture with one branch per unit, and
 * a software renderer (SwiftShader, headless Chromium) pays for every branch on every pixel —
 * measured here: 16 units 633 ms a frame, 4 units 100 ms, 1 unit 117 ms (more draw calls).
 */
function limitBatchTextures(renderer: Renderer): void {
  const limits = (renderer as unknown as { limits?: { maxBatchableTextures: number } }).limits;
  if (limits) limits.maxBatchableTextures = Math.min(limits.maxBatchableTextures, MAX_BATCH_TEXTURES);
}

/**
 * pixi's system ticker (`Ticker.system`: each renderer's scheduler, which times pixi's texture
 * GC, and its pointer-event ticker) asks for an animation frame 60 times a second for as long as
 * a renderer lives. Each is a main-thread frame for the whole page, a still village or not:
 * measured with a terminal open and nothing printed, 36–74 ms a second of the page's main thread
 * and as much again in Chromium's compositor and GPU processes, which a flood paid beside xterm's
 * own frames. Stopped before the renderers start, it is ticked by FrameLoop's frames instead
 * (`tickPixi`): pixi's scheduled work runs when the village draws, the only time it matters.
 */
function stopPixiSystemTicker(): void {
  Ticker.system.autoStart = false;
  Ticker.system.stop();
}
const tickPixi = (now: number) => Ticker.system.update(now);

/** pixi's own pointer events go unused (./input.ts reads the DOM and hit-tests itself): no listeners for them. */
function detachPixiEvents(renderer: Renderer): void {
  (renderer as unknown as { events?: { setTargetElement(el: HTMLElement | null): void } }).events?.setTargetElement(null);
}

function tuneRenderer(renderer: Renderer): void {
  limitBatchTextures(renderer);
  detachPixiEvents(renderer);
}

export async function createVillageEngine(host: HTMLElement, callbacks: () => EngineCallbacks): Promise<VillageEngine> {
  const resolution = Math.max(1, Math.min(3, window.devicePixelRatio || 1));
  // The moving things' canvas: transparent, over the static surface's canvas (see ./static-surface.ts).
  stopPixiSystemTicker();
  const app = new Application();
  // No ticker: frames are drawn on demand by FrameLoop.
  await app.init({ resizeTo: host, backgroundAlpha: 0, antialias: false, resolution, autoDensity: true, roundPixels: true, autoStart: false });
  app.ticker?.stop();
  tuneRenderer(app.renderer);
  const surface = await StaticSurface.create({ resolution, background: BACKGROUND, tune: tuneRenderer });
  installFonts(resolution);
  const tex = createTextures();
  const canvas = app.canvas;
  canvas.style.display = 'block';
  // Positioned, so it stacks over the (absolutely positioned) static canvas before it.
  canvas.style.position = 'relative';
  canvas.style.touchAction = 'none';
  canvas.style.imageRendering = 'pixelated';
  host.appendChild(surface.canvas);
  host.appendChild(canvas);

  const viewW = () => app.screen.width;
  const viewH = () => app.screen.height;
  const cam = new Camera({ width: viewW, height: viewH });

  // Static layers, on the static surface (redrawn only when invalidated): the map and its name plates.
  const labels = new Labels(surface.labels);
  const map = new MapLayer(tex, labels, () => surface.invalidate());
  surface.world.addChild(map.ground, map.buildings, map.highlight);
  // Moving layers, drawn every frame something moves: the world (scaled by the camera), labels
  // (moved, not scaled, so text stays crisp), HUD.
  const world = new Container({ label: 'world' });
  const overlay = new Container({ label: 'labels' });
  const hud = new Container({ label: 'hud' });
  const patrol = new PatrolLayer(tex, overlay);
  const actors = new ActorsLayer(tex, overlay);
  world.addChild(patrol.bugsLayer, actors.layer, patrol.healthLayer, patrol.smokeLayer);
  // Conflict radar (radar-layer.ts): glow and lines on the moving canvas, under the sprites; both are
  // redrawn only when the overlaps, the layout or an endpoint sprite change.
  const radar = new RadarLayer(host, (id, how) => callbacks().onRadar?.(id, how));
  world.addChildAt(radar.glow, world.getChildIndex(actors.layer));
  world.addChildAt(radar.lines, world.getChildIndex(actors.layer));
  app.stage.addChild(world, overlay, hud);
  const emptyText = new BitmapText({ text: 'No repositories yet', style: { fontFamily: fontName('title', 1), fontSize: FONT_SIZES.title[1] } });
  emptyText.visible = false;
  hud.addChild(emptyText);

  let layout: VillageLayout | null = null;
  let sessions: readonly SessionSummary[] = [];
  let sim: SimState = initialSimState();
  const arrivals = new Arrivals((id, room) => callbacks().onArrived?.(id, room));
  let selectedRoom: { repoId: string; roomPath: string } | null = null;
  let cameraDirty = true;
  let detailPending = false;
  /** The next static redraw may paint building detail for this long (the first screen of a new layout: more). */
  let detailBudget = DETAIL_BUDGET_MS;
  let framesSinceWorld = -1;
  let ready = false;
  let destroyed = false;
  /** When the village last changed (./ambient.ts: its slow animations play for a while after), and whether a setter changed it since the last frame. */
  let lastChange = -Infinity;
  let poked = false;
  /** After an unfold: the room to keep at the same screen point once the new layout is in. */
  let refocus: { repoId: string; path: string; sx: number; sy: number } | null = null;
  let lastMeasure: { result: FrameTimes } | null = null;
  let measuring: { until: number; last: number; n: number; panPx: number; result: FrameTimes; done: (x: FrameTimes) => void } | null = null;

  const crowds = new CrowdBadges(host, (id) => callbacks().onSelectSession(id));
  // Quest banners over buildings (quest-banners.ts): HTML links, placed each frame like the crowd badges.
  const questBanners = new QuestBanners(host);
  let questIds: string[] = [];

  const frame = (dt: number, now: number, sleptMs: number) => {
    if (destroyed) return;
    const t0 = performance.now();
    // The simulation: one clamped step, or (after sleeping) catch up in steps so timers such as a
    // failed sprite's linger keep real time.
    // A slow renderer (a few frames a second) steps in several MAX_STEP_MS pieces, so walks keep
    // real time instead of slowing down with the frame rate.
    let left = sleptMs > 0 && !sim.busy ? Math.min(sleptMs, MAX_CATCH_UP_MS) : Math.min(dt, MAX_FRAME_STEP_MS);
    do {
      sim = stepActors(sim, sessions, layout, Math.min(left, MAX_STEP_MS));
      left -= MAX_STEP_MS;
    } while (left > 0);
    arrivals.report(sim);
    if (measuring) {
      const m = measuring;
      lastMeasure = m;
      if (m.last >= 0) m.result.intervals.push(now - m.last);
      m.last = now;
      m.n++;
      cam.x += Math.floor(m.n / MEASURE_FLIP_FRAMES) % 2 ? -m.panPx : m.panPx;
      cameraDirty = true;
      if (now >= m.until) {
        measuring = null;
        queueMicrotask(() => m.done(m.result));
      }
    }
    if (cameraDirty) applyCamera();
    presentStatic();
    cameraDirty = false;
    if (poked || cameraDirty || sim.busy) lastChange = now;
    poked = false;
    const ambient = ambientPlays(now, lastChange);
    const bubbleWake = actors.sync(sim, cam, now, ambient);
    const patrolWake = patrol.animate(now, cam, ambient);
    crowds.update(sim, cam);
    questBanners.position(cam);
    radar.sync(sim, cam);
    tex.flush();
    tickPixi(now);
    const t1 = performance.now();
    app.render();
    const t2 = performance.now();
    const m = measuring ?? lastMeasure;
    if (m && m.result.js.length < m.result.intervals.length + 1) {
      m.result.js.push(t2 - t0);
      m.result.render.push(t2 - t1);
    }
    lastMeasure = null;
    if (framesSinceWorld >= 0 && !ready && ++framesSinceWorld >= READY_AFTER_FRAMES) {
      ready = true;
      host.dataset.ready = 'true';
    }
    // What the next frame waits for.
    if (sim.busy || detailPending || measuring || (framesSinceWorld >= 0 && !ready)) loop.request();
    else {
      const wakes = [bubbleWake, patrolWake, sim.wakeAt === null ? null : sim.wakeAt - sim.time].filter((x): x is number => x !== null);
      if (wakes.length) loop.requestIn(Math.min(...wakes));
    }
  };
  const loop = new FrameLoop(frame);

  function applyCamera(): void {
    cam.clamp(layout);
    world.scale.set(cam.zoom);
    world.position.set(cam.ox, cam.oy);
    overlay.position.set(cam.ox, cam.oy);
    patrol.position(cam);
    emptyText.position.set(Math.round(viewW() / 2 - emptyText.width / 2), Math.round(viewH() / 2 - emptyText.height / 2));
  }

  /**
   * The static surface follows the camera: moved by CSS while its picture still covers the view,
   * else (or when invalidated, or while building detail is still being painted) redrawn once.
   */
  function presentStatic(): void {
    const w = viewW();
    const h = viewH();
    if (!detailPending && !surface.needsRedraw(cam, w, h)) {
      surface.place(cam);
      return;
    }
    const sc = surface.aim(cam, w, h);
    const { w: sw, h: sh } = surface.size;
    map.setZoom(sc.zoom);
    detailPending = map.updateDetail(sc, sw, sh, detailBudget);
    detailBudget = DETAIL_BUDGET_MS;
    map.cull(sc);
    labels.layout(sc, sw, sh);
    surface.redraw(cam, w, h);
  }

  /** Something a person or the server changed: draw it, and let the slow animations play a while (./ambient.ts). */
  const poke = () => {
    poked = true;
    loop.request();
  };

  const cameraMoved = () => {
    cameraDirty = true;
    loop.request();
  };

  function fit(): void {
    if (layout && cam.fit(layout)) cameraMoved();
  }

  const detachInput = attachInput(host, canvas, {
    panBy(dx, dy) {
      cam.panBy(dx, dy);
      cameraMoved();
    },
    zoomAt(sx, sy, steps) {
      if (cam.zoomAt(sx, sy, steps)) cameraMoved();
    },
    refit() {
      cam.userMoved = false;
      fit();
    },
    viewCenter: () => ({ x: viewW() / 2, y: viewH() / 2 }),
    click(sx, sy) {
      if (!layout) return;
      const w = cam.toWorld(sx, sy);
      const id = actors.actorAt(w.x, w.y, cam);
      if (id) return callbacks().onSelectSession(id);
      const bug = patrol.bugAt(w.x, w.y, cam);
      if (bug) return callbacks().onSelectAlert(bug);
      const marker = map.markerAt(w.x / TILE, w.y / TILE, cam.zoom);
      if (marker) {
        // Keep the unfolded room in view when the new layout arrives (its rooms move).
        const before = cam.toScreen((marker.x + marker.w / 2) * TILE, (marker.y + marker.h / 2) * TILE);
        refocus = { repoId: marker.repoId, path: marker.path, sx: before.x, sy: before.y };
        return callbacks().onUnfold(marker.repoId, marker.path);
      }
      const r = roomAt(layout, w.x / TILE, w.y / TILE);
      if (r) callbacks().onSelectRoom(r.repoId, r.path);
    },
    hover(sx, sy) {
      const w = cam.toWorld(sx, sy);
      const pointer = !!actors.actorAt(w.x, w.y, cam) || !!patrol.bugAt(w.x, w.y, cam) || !!map.markerAt(w.x / TILE, w.y / TILE, cam.zoom);
      return { pointer, tooltip: labels.fullTextAt(w.x, w.y, cam.zoom) };
    },
  });

  const resizeObserver = new ResizeObserver(() => {
    app.resize();
    if (!cam.fitted || !cam.userMoved) fit();
    else cameraMoved();
  });
  resizeObserver.observe(host);

  const trails = new RoomTrails();
  const debugApi = createDebugApi({
    trails,
    ready: () => ready,
    frames: () => loop.frames,
    asleep: () => loop.asleep,
    staticRedraws: () => surface.redraws,
    mapSettled: () => !detailPending && !surface.needsRedraw(cam, viewW(), viewH()),
    layout: () => layout,
    sim: () => sim,
    cam,
    canvas,
    actors,
    map,
    patrol,
    zoomTo(zoom, focus) {
      const sx = viewW() / 2;
      const sy = viewH() / 2;
      const r = focus && layout ? roomByPath(layout, focus.repoId, focus.roomPath) : null;
      if (r) {
        // Put the room's centre in the middle of the view, then zoom around it.
        const c = cam.toScreen((r.x + r.w / 2) * TILE, (r.y + r.h / 2) * TILE);
        cam.x += sx - c.x;
        cam.y += sy - c.y;
      }
      cam.userMoved = true;
      cam.setZoom(zoom, sx, sy);
      cameraMoved();
    },
    measureFrames(ms, panPx = MEASURE_PAN_PX) {
      return new Promise((done) => {
        measuring = { until: performance.now() + ms, last: -1, n: 0, panPx, result: { intervals: [], js: [], render: [] }, done };
        loop.request();
      });
    },
  });

  debugApi.radarDrawn = () => radar.drawn();
  debugApi.questBanner = (repoId) => questBanners.banner(repoId);
  debugApi.questIds = () => [...questIds];

  return {
    setWorld(next, repos: readonly RepoSummary[]) {
      if (next === layout) return;
      layout = next;
      map.build(next, repos);
      patrol.draw(next);
      radar.setLayout(next);
      questBanners.setLayout(next);
      map.drawHighlight(selectedRoom);
      emptyText.visible = next.buildings.length === 0;
      const keep = refocus ? roomByPath(next, refocus.repoId, refocus.path) : null;
      if (keep && refocus) {
        const now = cam.toScreen((keep.x + keep.w / 2) * TILE, (keep.y + keep.h / 2) * TILE);
        cam.x += refocus.sx - now.x;
        cam.y += refocus.sy - now.y;
      } else if (!cam.fitted || !cam.userMoved) fit();
      refocus = null;
      cameraDirty = true;
      applyCamera();
      detailBudget = FIRST_DETAIL_BUDGET_MS;
      sim = stepActors(sim, sessions, layout, 0);
      if (framesSinceWorld < 0) framesSinceWorld = 0;
      loop.request();
    },
    setSessions(next) {
      sessions = next;
      // Reconcile at once (a zero step): who is where changes now, even if the next frame is late,
      // so a quick succession of rooms is never skipped.
      const before = sim;
      sim = stepActors(sim, sessions, layout, 0);
      // New sessions arrive often with nothing new for the village: only a real change livens it.
      if (actorsChanged(before, sim)) poked = true;
      trails.record(sim);
      arrivals.report(sim);
      loop.request();
    },
    setSelection(sessionId, room) {
      const changed = room?.repoId !== selectedRoom?.repoId || room?.roomPath !== selectedRoom?.roomPath;
      selectedRoom = room;
      if (changed) map.drawHighlight(room);
      actors.setSelected(sessionId);
      poke();
    },
    setPatrolState(alerts, health) {
      patrol.setState(alerts, health);
      patrol.draw(layout);
      patrol.position(cam);
      poke();
    },
    setSelectedAlert(id) {
      patrol.setSelected(id);
      poke();
    },
    setRadar(overlaps) {
      radar.setOverlaps(overlaps);
      poke();
    },
    setQuests(quests) {
      questIds = quests.map((q) => q.id);
      questBanners.setQuests(quests);
      questBanners.position(cam);
      poke();
    },
    fit,
    debugApi,
    destroy() {
      if (destroyed) return;
      destroyed = true;
      loop.stop();
      resizeObserver.disconnect();
      detachInput();
      crowds.destroy();
      questBanners.destroy();
      radar.destroy();
      if (window.__village === debugApi) delete window.__village;
      if (ready) delete host.dataset.ready;
      patrol.clear();
      map.clear();
      actors.destroy();
      app.destroy({ removeView: true }, { children: true });
      surface.destroy();
      tex.destroy();
    },
  };
}

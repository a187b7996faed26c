/** The village engine's public surface: what Village.tsx calls, and what it is called back with. */
import type { RepoSummary, SessionSummary } from '../../../protocol/ui';
import type { AlertSummary, RepoHealth } from '../../../protocol/patrols';
import type { VillageLayout } from '../layout';
import type { RadarOverlap } from '../../../protocol/radar';
import type { QuestUpdated } from '../../../protocol/quests';
import type { QuestBanner } from '../quest-workers';

export interface EngineCallbacks {
  onSelectSession(id: string): void;
  onSelectRoom(repoId: string, roomPath: string): void;
  /** Clicking a bug (an alert from a patrol). */
  onSelectAlert(id: string): void;
  /** Clicking a room's "+N more" marker: draw its folded directories. */
  onUnfold(repoId: string, roomPath: string): void;
  /** Hover, focus or click on a conflict radar's badge (null: the pointer left it). */
  onRadar?(overlapId: string | null, how: 'hover' | 'focus' | 'click'): void;
  /** A sprite stands in a room (its walk there ended): a replay sends it on to the next room. */
  onArrived?(sessionId: string, roomPath: string): void;
}

export interface VillageDebugApi {
  readonly ready: boolean;
  /** Client (page) coordinates of the sprite's centre, for a real mouse click. */
  spriteScreenPosition(sessionId: string): { x: number; y: number } | null;
  /** The room path the sprite is in or walking to (null when it is leaving or unknown). */
  spriteRoom(sessionId: string): string | null;
  /** Every room the sprite was sent to, in order (a test need not catch each one while it lasts). */
  spriteTrail(sessionId: string): string[];
  /** Whether the sprite is on its way somewhere (false once it stands in its room). */
  spriteWalking(sessionId: string): boolean;
  /** The bubble drawn over the sprite ('approval', 'input', …), null when none is shown. */
  spriteBubble(sessionId: string): string | null;
  /** Whether the sprite waits in a crowd's "+N" instead of being drawn. */
  spriteHidden(sessionId: string): boolean;
  /** Client coordinates of a point that selects exactly this room when clicked (its top wall). */
  roomScreenPosition(repoId: string, roomPath: string): { x: number; y: number } | null;
  /** Client coordinates of a room's "+N more" (unfold) marker, null when it has none. */
  foldMarkerScreenPosition(repoId: string, roomPath: string): { x: number; y: number } | null;
  /** Current zoom level (one of ZOOMS, or a fitted zoom below them). */
  readonly zoom: number;
  /** Zooms to `zoom` around the point of `room` (or the view's centre) — for screenshots and benches. */
  zoomTo(zoom: number, focus?: { repoId: string; roomPath: string }): void;
  /** The room an alert's bug sits in (null when it is not shown). */
  alertRoom(alertId: string): string | null;
  /** Client coordinates of an alert's bug, for a real mouse click. */
  alertScreenPosition(alertId: string): { x: number; y: number } | null;
  /** The health a building's bar shows (0..1), null when it has none. */
  health(repoId: string): number | null;
  /** Whether the building smokes (its build patrol fails). */
  smoking(repoId: string): boolean;
  /** Frames drawn so far (a still village draws none). */
  readonly frames: number;
  /**
   * Whether the village asks for no more frames: nothing walks, fades or animates (slow animations
   * rest a while after the last change, ./ambient.ts; a bubble waiting for a person bobs on).
   */
  readonly asleep: boolean;
  /** Times the static map was drawn (layout, zoom, selection, detail, or a pan past its margin); a pan inside the margin draws none. */
  readonly staticRedraws: number;
  /** Whether the static map shows everything for the current camera (no redraw or building detail pending). */
  readonly mapSettled: boolean;
  /** Draws every frame for `ms` while panning to and fro (`panPx` per frame, 2 by default); resolves with each frame's timings. */
  measureFrames(ms: number, panPx?: number): Promise<FrameTimes>;
  /** Conflict radar: each overlap's glowing room (null when not on the map) and whether a line joins two sprites. */
  radarDrawn?(): Array<{ id: string; room: string | null; line: boolean }>;
  /** The quest banner over a repository's building (goal, "step n/m …", failed steps, link), null when no quest of it is live. */
  questBanner?(repoId: string): (QuestBanner & { shown: boolean }) | null;
  /** Ids of the quests the village was last given (a push arrived when a new one is here). */
  questIds?(): string[];
}

/** Per-frame figures of a measurement (ms): time between frames, main-thread time of the frame, of which pixi's render call. */
export interface FrameTimes {
  intervals: number[];
  js: number[];
  render: number[];
}

declare global {
  interface Window {
    /** Read-only debug / test API of the mounted village (see VillageDebugApi); test builds or ?debug only. */
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
  /** Conflict radar overlaps to draw (glowing rooms, lines between sprites, badges). */
  setRadar(overlaps: readonly RadarOverlap[]): void;
  /** Quests: a banner over each live quest's building (its steps are sprites, given with the sessions). */
  setQuests(quests: readonly QuestUpdated[]): void;
  /** Re-fits the whole village in view. */
  fit(): void;
  /** The read-only debug / test API (Village.tsx publishes it as window.__village when hooks are on). */
  readonly debugApi: VillageDebugApi;
  destroy(): void;
}

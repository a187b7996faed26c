/** The shapes the layout produces (tile coordinates) and the inputs it takes. */
import type { RepoTree } from '../../../protocol/world';

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

/** The workshop exists when the org has deterministic agents; `agents` sets how many benches it has. */
export interface VillageWorkshopInput {
  agents: number;
}

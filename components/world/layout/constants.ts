/** Tuning numbers of the village layout, in tiles. */

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
export const LOBBY = 2;
export const LEAF_MIN_W = 6;
export const LEAF_MAX_W = 14;
export const LEAF_H = 5;
export const CONSTRUCTION_W = 12;
export const CONSTRUCTION_H = 8;
/** Free tiles around the village, the vertical road sits in it. */
export const MARGIN_X = 6;
export const MARGIN_TOP = 3;
export const BUILDING_GAP = 3;
export const ROW_GAP_ABOVE = 3;
export const ROAD_H = 2;

/** The workshop's id where a repository id would go: runs of deterministic agents stand in it. */
export const WORKSHOP_ID = 'workshop';
export const WORKSHOP_NAME = 'Workshop';
export const WORKSHOP_H = 9;
export const WORKSHOP_MIN_W = 12;
export const WORKSHOP_MAX_W = 22;

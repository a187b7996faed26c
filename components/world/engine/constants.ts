/** Tuning numbers of the village renderer, each with the reason for its value. */

/** Zoom levels: integer-ish so pixels stay crisp. */
export const ZOOMS = [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4] as const;
/** Lowest zoom a fit may choose for a very large village. */
export const MIN_ZOOM = 0.1;
/** Padding (screen px) around the village when it is fitted into view. */
export const FIT_PADDING = 24;
/** A fit never zooms in further than this (keeps some context around a small village). */
export const FIT_MAX_ZOOM = 2;
/**
 * Buildings get full-resolution pixels from this zoom up; below it a quarter-resolution picture
 * (drawn at most 2× magnified there, and four times fewer texels for a software renderer to fetch).
 */
export const HI_DETAIL_ZOOM = 0.5;
/** Scale of the low-detail building pictures (a quarter of the pixels in each direction). */
export const LO_SCALE = 0.25;
/** Full-resolution building textures are sliced into pieces of at most this size (GPU limits). */
export const MAX_TEXTURE = 2048;
/** Static ground (grass, paths, trees, shadows) is cached in square chunks of this many tiles. */
export const CHUNK_TILES = 64;
/** Grass and trees reach this many tiles beyond the village on every side. */
export const FOREST_RING = 12;
/** Forest density is thinned on huge villages so there are at most about this many tree cells. */
export const FOREST_CELLS = 60_000;
/** Where feet stand inside a tile (fraction of the tile). */
export const FEET_Y = 0.9;
/** One step of the walk cycle. */
export const WALK_FRAME_MS = 140;
/** Pointer travel (px) before a press becomes a drag instead of a click. */
export const DRAG_THRESHOLD = 4;
/** Arrow keys pan by this many screen px. */
export const KEY_PAN_PX = 64;
/** Accumulated wheel delta (px) per zoom step, so a trackpad does not skip levels. */
export const WHEEL_STEP_PX = 50;
/** Extra screen px around the view inside which labels and sprites are still kept (no pop-in while panning). */
export const CULL_MARGIN_PX = 64;
/** Bugs flip their legs, bubbles bob one pixel: the slow animations that need a frame now and then. */
export const BUG_FRAME_MS = 320;
export const BUBBLE_BOB_MS = 450;
/** Smoke rises continuously: frames at this interval while a smoking building is in view. */
export const SMOKE_FRAME_MS = 50;
/** Puffs per smoking building, and how long one takes to rise and fade. */
export const PUFFS = 8;
export const PUFF_MS = 2400;
/** Milliseconds of painting building pixels per frame (the rest waits for the next frames). */
export const DETAIL_BUDGET_MS = 12;
/** The first screen of a new layout may take this long to paint at once. */
export const FIRST_DETAIL_BUDGET_MS = 400;
/** Below this zoom, room names of depth ≥ 1, 2, 3 are hidden (level of detail: a clean map when far away). */
export const LABEL_MIN_ZOOM_BY_DEPTH = [0, 0.35, 0.6, 0.9] as const;
/** "+N more" markers and building notes appear from this zoom. */
export const NOTE_MIN_ZOOM = 0.6;
/** Health labels appear from this zoom. */
export const HEALTH_LABEL_MIN_ZOOM = 0.35;
/** The name tag over the selected sprite is cut at this many characters. */
export const TITLE_MAX_CHARS = 60;
/**
 * The static surface is drawn this many screen px beyond the view on every side, so a pan of up to
 * this much only moves the finished picture (CSS) instead of drawing the map again. Larger costs a
 * bigger redraw when it does happen (the surface's area grows with it).
 */
export const STATIC_MARGIN_PX = 256;

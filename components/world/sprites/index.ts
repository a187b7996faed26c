/**
 * Pixel art generated in code: a small calm palette, characters with a four-direction walk cycle,
 * floor / wall / door / grass / path tiles, state bubbles and a construction sign.
 *
 * Everything is painted into small offscreen canvases pixel by pixel (deterministically), then turned
 * into pixi textures with nearest-neighbour scaling so they stay crisp when zoomed.
 */
export type { BubbleKind } from '../status';
export { PALETTE, BACKGROUND } from './palette';
export { hashString, noise, makeCanvas, paintRows } from './canvas';
export { tileCanvas, floorKind, furnitureCanvas, type TileKind, type FurnitureKind } from './tiles';
export { DIRECTIONS, variantFor, patrolVariantFor, characterRows, type Direction, type CharacterVariant } from './characters';
export { propCanvas, bugCanvas, type PropKind } from './props';
export { createTextures, type VillageTextures, type WalkFrames } from './textures';

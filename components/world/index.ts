// The village's pure parts (safe on the server and in tests). The renderer itself is the default
// export of './Village' (browser only: load it with next/dynamic and { ssr: false }).
export {
  TILE,
  MAX_DEPTH,
  MAX_CHILDREN,
  MAX_ROOMS_PER_BUILDING,
  layoutVillage,
  roomFor,
  roomByPath,
  roomAt,
  spotFor,
  routeTo,
  routeBetween,
  planWalk,
  buildingFor,
  normalizePath,
  bugSpotsFor,
  WORKSHOP_ID,
  WORKSHOP_NAME,
} from './layout';
export type { Point, Rect, RoomLayout, BuildingLayout, VillageLayout, VillageRepoInput, VillageWorkshopInput, Walk } from './layout';
export { runAsSession } from './runs';
export { bubbleFor, statusText } from './status';
export type { BubbleKind } from './status';
export type { VillageProps } from './Village';
export type { VillageDebugApi } from './engine';

/** The village's small calm palette; floors change colour with room depth. */
export const PALETTE = {
  outline: '#2a2232',
  grass: '#86b36a',
  grassDark: '#739f5b',
  grassLight: '#9bc47b',
  path: '#d9c49b',
  pathDark: '#c4ab7f',
  pathLight: '#e8d8b4',
  dirt: '#b08a62',
  dirtDark: '#97734f',
  dirtLight: '#c39d74',
  wall: '#7d6f66',
  wallDark: '#655850',
  wallLight: '#958780',
  rootWall: '#5f5560',
  rootWallLight: '#766c77',
  plank: '#6b4a33',
  plankLight: '#8a6446',
  cream: '#f4ecd8',
  white: '#fbf8f0',
  red: '#d0473f',
  redDark: '#9c2f2a',
  yellow: '#f1c44e',
  yellowDark: '#c99a2e',
  blue: '#4d7fc1',
  leaf: '#4f8f4a',
  leafLight: '#6fb062',
  pot: '#b4663f',
  screen: '#6fc3d8',
  shadow: 'rgba(20, 16, 28, 0.22)',
} as const;

/** Background of the village (the grass colour, so the edges blend). */
export const BACKGROUND = 0x82ae66;

/** Floors by room depth (0 = the building's hall). */
export const FLOORS = [
  { kind: 'wood', base: '#c9a06e', dark: '#a97f50', light: '#d8b381' },
  { kind: 'stone', base: '#bdb6a8', dark: '#a39c8e', light: '#cec8bc' },
  { kind: 'wood', base: '#dcc08f', dark: '#bf9f6c', light: '#e8d2a8' },
  { kind: 'stone', base: '#a9b8bf', dark: '#8fa0a8', light: '#c0ccd1' },
] as const;

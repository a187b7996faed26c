import { describe, expect, it } from 'vitest';
import { STATIC_MARGIN_PX } from './constants';
import { pictureCovers, type DrawnFor } from './static-cover';

const drawn: DrawnFor = { ox: 100, oy: -40, zoom: 1, viewW: 1400, viewH: 900 };

describe('pictureCovers (when a pan only moves the static map)', () => {
  it('a pan up to the margin in any direction keeps the picture', () => {
    for (const [dx, dy] of [[0, 0], [STATIC_MARGIN_PX, 0], [-STATIC_MARGIN_PX, 0], [0, STATIC_MARGIN_PX], [0, -STATIC_MARGIN_PX], [STATIC_MARGIN_PX, -STATIC_MARGIN_PX]]) {
      expect(pictureCovers(drawn, { ...drawn, ox: drawn.ox + dx!, oy: drawn.oy + dy! })).toBe(true);
    }
  });
  it('a pan past the margin, a zoom or a new view size needs a redraw', () => {
    expect(pictureCovers(drawn, { ...drawn, ox: drawn.ox + STATIC_MARGIN_PX + 1 })).toBe(false);
    expect(pictureCovers(drawn, { ...drawn, oy: drawn.oy - STATIC_MARGIN_PX - 1 })).toBe(false);
    expect(pictureCovers(drawn, { ...drawn, zoom: 1.5 })).toBe(false);
    expect(pictureCovers(drawn, { ...drawn, viewW: 1399 })).toBe(false);
    expect(pictureCovers(drawn, { ...drawn, viewH: 901 })).toBe(false);
  });
  it('nothing drawn yet covers nothing', () => {
    expect(pictureCovers(null, drawn)).toBe(false);
  });
});

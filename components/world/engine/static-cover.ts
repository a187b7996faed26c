/**
 * When the static surface's picture still serves the camera (pure: no pixi, unit-tested). The
 * picture was drawn for one zoom and view size, a margin wider than the view on every side; a pan
 * of up to that margin only moves it.
 */
import { STATIC_MARGIN_PX } from './constants';

/** The part of the camera a drawn picture depends on. */
export interface DrawnFor {
  ox: number;
  oy: number;
  zoom: number;
  viewW: number;
  viewH: number;
}

export function pictureCovers(drawn: DrawnFor | null, now: DrawnFor, margin = STATIC_MARGIN_PX): boolean {
  return (
    drawn !== null &&
    drawn.zoom === now.zoom &&
    drawn.viewW === now.viewW &&
    drawn.viewH === now.viewH &&
    Math.abs(now.ox - drawn.ox) <= margin &&
    Math.abs(now.oy - drawn.oy) <= margin
  );
}

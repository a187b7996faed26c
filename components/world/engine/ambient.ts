/**
 * When the village's slow animations play (pure: no pixi, unit-tested). Bubbles bobbing, bugs
 * wiggling and smoke rising decorate a state that lasts for minutes; drawn on forever they cost a
 * frame every few hundred ms for as long as the page is open (a frame of the moving canvas is a
 * whole-canvas draw for a software renderer). So they play for AMBIENT_MS after the village last
 * changed and then hold still: a village nobody changes draws nothing. Bubbles that wait for a
 * person (an approval, an answer) bob on. Every animation of a kind keeps one shared beat, so ten
 * bobbing bubbles cost the frames of one, not ten.
 */
import type { BubbleKind } from '../status';

/** Ambient animations play this long after the last change (a walk, a new state, a camera move, an alert). */
export const AMBIENT_MS = 8_000;

/** Which half of a two-pose beat of `periodMs` the page is in at `now` (the same for every sprite). */
export function beat(now: number, periodMs: number): 0 | 1 {
  return Math.floor(now / periodMs) % 2 === 0 ? 0 : 1;
}

/** How long until the shared beat flips (in (0, periodMs]). */
export function msToNextBeat(now: number, periodMs: number): number {
  return periodMs - (((now % periodMs) + periodMs) % periodMs);
}

/** Bubbles that ask a person for something keep bobbing while the rest of the village rests. */
export function bobsOn(kind: BubbleKind): boolean {
  return kind === 'approval' || kind === 'input';
}

/** Whether ambient animations still play at `now`, the village having last changed at `lastChange`. */
export function ambientPlays(now: number, lastChange: number): boolean {
  return now - lastChange < AMBIENT_MS;
}

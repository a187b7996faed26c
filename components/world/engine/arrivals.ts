import type { SimState } from './simulation';

/**
 * Tells the page when a sprite has come to stand in a room (its walk there is over, or it was
 * placed there at once): a replay walks the sprite room by room and sends it on only then.
 * Reported once per room reached, after the step (a microtask, so no callback runs inside one).
 */
export class Arrivals {
  private readonly standing = new Map<string, string>();

  constructor(private readonly onArrived: (sessionId: string, roomPath: string) => void) {}

  report(sim: SimState): void {
    const now: Array<[string, string]> = [];
    for (const [id, a] of sim.actors) {
      if (a.roomPath === null || a.leaving || a.walk) {
        if (a.walk || a.leaving) this.standing.delete(id);
        continue;
      }
      if (this.standing.get(id) === a.roomPath) continue;
      this.standing.set(id, a.roomPath);
      now.push([id, a.roomPath]);
    }
    for (const id of this.standing.keys()) if (!sim.actors.has(id)) this.standing.delete(id);
    if (now.length) queueMicrotask(() => now.forEach(([id, room]) => this.onArrived(id, room)));
  }
}

import type { RadarOverlap, RadarSubject, RadarTimelineEntry } from '../../protocol';

/**
 * Conflict radar, the pure part: given what each live subject (session or DTA run) touched and
 * when, which pairs overlap. Same file = any time while both are alive (their diffs will meet at
 * merge); same directory = both within the window (they are working side by side right now).
 */

export interface Touch {
  path: string;
  /** epoch ms */
  ts: number;
}

export interface RadarInput extends RadarSubject {
  repo_id: string;
  touches: Touch[];
}

/** The directory (room) of a file: '' for the repository root. */
export function roomOf(file: string): string {
  const slash = file.lastIndexOf('/');
  return slash < 0 ? '' : file.slice(0, slash);
}

/** Each path's first and last touch. */
function summarise(touches: Touch[]): Map<string, { first: number; last: number }> {
  const out = new Map<string, { first: number; last: number }>();
  for (const t of touches) {
    const seen = out.get(t.path);
    if (!seen) out.set(t.path, { first: t.ts, last: t.ts });
    else {
      if (t.ts < seen.first) seen.first = t.ts;
      if (t.ts > seen.last) seen.last = t.ts;
    }
  }
  return out;
}

/** Each room's first touch, counting only touches at or after `since`. */
function recentRooms(files: Map<string, { first: number; last: number }>, since: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [file, t] of files) {
    if (t.last < since) continue;
    const room = roomOf(file);
    const first = Math.max(t.first, since);
    const seen = out.get(room);
    if (seen === undefined || first < seen) out.set(room, first);
  }
  return out;
}

const byTsThenSubject = (x: RadarTimelineEntry, y: RadarTimelineEntry) => x.ts - y.ts || (x.subject < y.subject ? -1 : x.subject > y.subject ? 1 : 0);

/** Every overlapping pair, in a stable order (by id). Subjects of different repositories never overlap. */
export function detectOverlaps(subjects: RadarInput[], now: number, windowMs: number): RadarOverlap[] {
  const since = now - windowMs;
  const prepared = subjects
    .map((s) => {
      const files = summarise(s.touches);
      return { s, files, rooms: recentRooms(files, since) };
    })
    .sort((x, y) => (x.s.id < y.s.id ? -1 : x.s.id > y.s.id ? 1 : 0));
  const out: RadarOverlap[] = [];
  for (let i = 0; i < prepared.length; i++) {
    for (let j = i + 1; j < prepared.length; j++) {
      const A = prepared[i];
      const B = prepared[j];
      if (A.s.repo_id !== B.s.repo_id) continue;
      const timeline: RadarTimelineEntry[] = [];
      const files = [...A.files.keys()].filter((f) => B.files.has(f)).sort();
      for (const f of files) {
        timeline.push({ subject: A.s.id, path: f, ts: A.files.get(f)!.first }, { subject: B.s.id, path: f, ts: B.files.get(f)!.first });
      }
      // A shared directory only counts when no shared file already explains it.
      const fileRooms = new Set(files.map(roomOf));
      const dirs = [...A.rooms.keys()].filter((r) => B.rooms.has(r) && !fileRooms.has(r)).sort();
      for (const d of dirs) {
        timeline.push({ subject: A.s.id, path: `${d}/`, ts: A.rooms.get(d)! }, { subject: B.s.id, path: `${d}/`, ts: B.rooms.get(d)! });
      }
      if (timeline.length === 0) continue;
      timeline.sort(byTsThenSubject);
      out.push({
        id: `${A.s.id}|${B.s.id}`,
        repo_id: A.s.repo_id,
        a: { kind: A.s.kind, id: A.s.id },
        b: { kind: B.s.kind, id: B.s.id },
        room_path: files.length > 0 ? roomOf(files[0]) : dirs[0],
        files,
        dirs,
        timeline,
        first: timeline[0].subject,
      });
    }
  }
  return out;
}

import { describe, expect, it } from 'vitest';
import { detectOverlaps, roomOf, type RadarInput } from './radar-overlap';

const MIN = 60_000;
const NOW = 1_800_000_000_000;
const WINDOW = 10 * MIN;

const session = (id: string, touches: Array<[string, number]>, repo_id = 'repo_aaaaaa'): RadarInput => ({
  kind: 'session',
  id,
  repo_id,
  touches: touches.map(([path, ago]) => ({ path, ts: NOW - ago })),
});

describe('detectOverlaps', () => {
  it('pairs two sessions that touched the same file, with who got there first', () => {
    const a = session('sess_aaaaaa', [['src/core/lamp.js', 5 * MIN], ['docs/a.md', MIN]]);
    const b = session('sess_bbbbbb', [['src/core/lamp.js', 7 * MIN]]);
    const [o, ...rest] = detectOverlaps([a, b], NOW, WINDOW);
    expect(rest).toEqual([]);
    expect(o.files).toEqual(['src/core/lamp.js']);
    expect(o.dirs).toEqual([]);
    expect(o.room_path).toBe('src/core');
    expect(o.first).toBe('sess_bbbbbb');
    expect(o.timeline.map((t) => t.subject)).toEqual(['sess_bbbbbb', 'sess_aaaaaa']);
    expect(o.id).toBe('sess_aaaaaa|sess_bbbbbb');
  });

  it('counts a shared file however long ago, as long as both are alive', () => {
    const a = session('sess_aaaaaa', [['README.md', 300 * MIN]]);
    const b = session('sess_bbbbbb', [['README.md', 200 * MIN]]);
    expect(detectOverlaps([a, b], NOW, WINDOW)[0].files).toEqual(['README.md']);
    expect(detectOverlaps([a, b], NOW, WINDOW)[0].room_path).toBe('');
  });

  it('pairs sessions working in the same directory within the window only', () => {
    const a = session('sess_aaaaaa', [['src/api/x.js', 2 * MIN]]);
    const b = session('sess_bbbbbb', [['src/api/y.js', 3 * MIN]]);
    const [o] = detectOverlaps([a, b], NOW, WINDOW);
    expect(o.files).toEqual([]);
    expect(o.dirs).toEqual(['src/api']);
    expect(o.room_path).toBe('src/api');
    expect(o.timeline.map((t) => t.path)).toEqual(['src/api/', 'src/api/']);
    expect(o.first).toBe('sess_bbbbbb');
    // One of them was there before the window: no longer side by side.
    const old = session('sess_bbbbbb', [['src/api/y.js', 11 * MIN]]);
    expect(detectOverlaps([a, old], NOW, WINDOW)).toEqual([]);
  });

  it('does not pair different directories, different repositories or a session with itself', () => {
    const a = session('sess_aaaaaa', [['src/api/x.js', MIN]]);
    const b = session('sess_bbbbbb', [['src/core/x.js', MIN]]);
    const c = session('sess_cccccc', [['src/api/x.js', MIN]], 'repo_other1');
    expect(detectOverlaps([a, b, c], NOW, WINDOW)).toEqual([]);
    expect(detectOverlaps([a], NOW, WINDOW)).toEqual([]);
  });

  it('reports a shared directory only when no shared file explains it', () => {
    const a = session('sess_aaaaaa', [['src/x.js', MIN], ['src/y.js', MIN]]);
    const b = session('sess_bbbbbb', [['src/x.js', MIN], ['src/z.js', MIN]]);
    const [o] = detectOverlaps([a, b], NOW, WINDOW);
    expect(o.files).toEqual(['src/x.js']);
    expect(o.dirs).toEqual([]);
  });

  it('pairs a session with a DTA run, and gives every pair of three its own overlap in a stable order', () => {
    const dta: RadarInput = { kind: 'dta', id: 'dta_zzzzzz', repo_id: 'repo_aaaaaa', touches: [{ path: 'src/x.js', ts: NOW }] };
    const a = session('sess_bbbbbb', [['src/x.js', MIN]]);
    const b = session('sess_aaaaaa', [['src/x.js', 2 * MIN]]);
    const out = detectOverlaps([dta, a, b], NOW, WINDOW);
    expect(out.map((o) => o.id)).toEqual(['dta_zzzzzz|sess_aaaaaa', 'dta_zzzzzz|sess_bbbbbb', 'sess_aaaaaa|sess_bbbbbb']);
    expect(out[0].a).toEqual({ kind: 'dta', id: 'dta_zzzzzz' });
    expect(out[2].first).toBe('sess_aaaaaa');
  });

  it('roomOf is the directory of a file', () => {
    expect(roomOf('a/b/c.txt')).toBe('a/b');
    expect(roomOf('c.txt')).toBe('');
  });
});

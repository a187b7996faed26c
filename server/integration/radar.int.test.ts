import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndedSession, RadarCompareResult, RadarSnapshot, SessionStory, SessionSummary } from '../../protocol';
import { Api, startStack, waitFor, type Stack } from './harness';

/**
 * Conflict radar and session story through the real server, its attached runner, real shells and
 * real git: two sessions append different lines to one file (a conflict), a third adds a new file
 * elsewhere (merges cleanly); the radar pairs the first two and the runner's `git merge-tree`
 * names the conflicting file and both sides' lines. Then one ends and its story keeps its diff.
 */
describe('conflict radar: merge preview on the runner', () => {
  let stack: Stack;
  let api: Api;
  beforeAll(async () => {
    stack = await startStack();
    api = new Api(stack.url);
    await api.setupAdmin();
  }, 180_000);
  afterAll(() => stack?.stop());

  const FILE = 'src/core/lamp.js';
  let a: SessionSummary;
  let b: SessionSummary;
  let c: SessionSummary;

  async function shell(title: string, command: string): Promise<SessionSummary> {
    const repo = await api.readyRepo();
    const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell', title });
    await api.waitState(s.id, ['RUNNING']);
    await api.ok('POST', `/api/sessions/${s.id}/input`, { data: `${command}\r` });
    return s;
  }

  it('pairs two sessions that changed one file and previews their merge as a conflict in that file', async () => {
    a = await shell('radar A', `printf '// lamp from A\\n' >> ${FILE}`);
    b = await shell('radar B', `printf '// lamp from B\\n' >> ${FILE}`);
    c = await shell('radar C', `mkdir -p docs && printf 'new note\\n' > docs/radar-note.md`);

    const overlap = await waitFor(async () => {
      const snap = await api.ok<RadarSnapshot>('GET', '/api/radar');
      return snap.overlaps.find((o) => o.files.includes(FILE) && [o.a.id, o.b.id].sort().join() === [a.id, b.id].sort().join());
    }, 'the radar to pair A and B', 60_000);
    expect(overlap.room_path).toBe('src/core');
    expect([a.id, b.id]).toContain(overlap.first);
    expect(overlap.timeline.filter((t) => t.path === FILE)).toHaveLength(2);
    // C worked elsewhere: no overlap with either.
    const snap = await api.ok<RadarSnapshot>('GET', '/api/radar');
    expect(snap.overlaps.some((o) => o.files.length > 0 && [o.a.id, o.b.id].includes(c.id))).toBe(false);

    const hunks = await api.ok<RadarCompareResult>('POST', '/api/radar/compare', { session_a: a.id, session_b: b.id });
    expect(hunks.merge).toBeNull();
    const file = hunks.files.find((f) => f.path === FILE)!;
    expect(file.overlapping).toBe(true);
    expect(file.a[0].lines).toContain('+// lamp from A');
    expect(file.b[0].lines).toContain('+// lamp from B');

    const preview = await api.ok<RadarCompareResult>('POST', '/api/radar/compare', { session_a: a.id, session_b: b.id, merge: true });
    expect(preview.merge?.clean).toBe(false);
    const conflict = preview.merge!.conflicts.find((x) => x.path === FILE)!;
    expect(conflict.kind).toBe('contents');
    expect(conflict.regions[0].a).toEqual(['// lamp from A']);
    expect(conflict.regions[0].b).toEqual(['// lamp from B']);

    // A new file in another directory (untracked, never added by the agent) merges cleanly.
    const clean = await api.ok<RadarCompareResult>('POST', '/api/radar/compare', { session_a: a.id, session_b: c.id, merge: true });
    expect(clean.merge).toMatchObject({ clean: true, conflicts: [] });
    // The preview did not touch either worktree's index or branch: A's change is still uncommitted.
    const status = execFileSync('git', ['status', '--porcelain'], { cwd: join(stack.dataDir, 'runner', 'worktrees', a.id), encoding: 'utf8' });
    expect(status).toBe(` M ${FILE}\n`);
  }, 180_000);

  it('answers bad input with a clear error, changes nothing and stays up', async () => {
    const same = await api.request('POST', '/api/radar/compare', { session_a: a.id, session_b: a.id });
    expect(same.status).toBe(400);
    const junk = await api.request('POST', '/api/radar/compare', { session_a: 'nope', session_b: 42 });
    expect(junk.status).toBe(400);
    const unknown = await api.request('POST', '/api/radar/compare', { session_a: a.id, session_b: 'sess_doesnotexist' });
    expect(unknown.status).toBe(404);
    const bad = await api.request('GET', '/api/session-history?limit=zero');
    expect(bad.status).toBe(400);
    expect((await api.ok<RadarSnapshot>('GET', '/api/radar')).overlaps.length).toBeGreaterThan(0);
  });

  it('keeps an ended session reachable: its story has the diff, and the history lists it', async () => {
    await api.ok('POST', `/api/sessions/${a.id}/stop`);
    await api.waitState(a.id, ['COMPLETED', 'FAILED'], 60_000);
    const story = await waitFor(async () => {
      const s = await api.ok<SessionStory>('GET', `/api/sessions/${a.id}/story`);
      return s.patch ? s : null;
    }, 'the final diff in the story', 30_000);
    expect(story.files.map((f) => f.path)).toContain(FILE);
    expect(story.patch).toContain('+// lamp from A');
    expect(story.ended_at).not.toBeNull();
    expect(story.rooms[story.rooms.length - 1]).toBe('src/core');
    const md = await fetch(`${stack.url}/api/sessions/${a.id}/story?format=md`, { headers: { cookie: api.cookie } });
    expect(md.headers.get('content-type')).toContain('text/markdown');
    expect(await md.text()).toContain('+// lamp from A');
    const history = await api.ok<EndedSession[]>('GET', `/api/session-history?repo_id=${a.repo_id}`);
    expect(history.map((h) => h.id)).toContain(a.id);
    expect(history.map((h) => h.id)).not.toContain(b.id);
    // The radar forgets a pair once one side has ended.
    const snap = await api.ok<RadarSnapshot>('GET', '/api/radar');
    expect(snap.overlaps.some((o) => [o.a.id, o.b.id].includes(a.id))).toBe(false);
  }, 120_000);
});

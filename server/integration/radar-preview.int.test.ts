import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DtaRunSummary, RadarCompareResult, RadarSnapshot, SessionSummary } from '../../protocol';
import { gitIn, makeRepo, SITE_FILES } from '../../runner/dta/testing/fixture-repos';
import { Api, ROOT, startStack, waitFor, type Stack } from './harness';

/**
 * The radar's merge preview for every pair it shows, through the real server, its attached
 * runner, a second runner process, real shells and real git: a session against a DTA run
 * (link_updater dry-run waiting for approval: its side is built on the runner as base + patch),
 * and two sessions on two runners (one runner sends its session's work as a binary patch against
 * the merge base). Each with a conflicting and a clean case; bad input changes nothing.
 */
const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
const CSS = 'site/css/site.css';
const GUIDE = 'site/docs/guide.md';

function startRunner(stack: Stack, token: string, name: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', name, '--data-dir', join(stack.dataDir, name)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('conflict radar: merge preview for a session and a DTA run, and across runners', () => {
  let stack: Stack;
  let api: Api;
  let source: string;
  let second: ChildProcess | null = null;
  let repoId: string;

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_VILLAGE_DEMO_REPO: '0' } });
    api = new Api(stack.url);
    await api.setupAdmin();
    source = makeRepo(SITE_FILES, 'radar-preview');
    await api.ok('POST', '/api/repos', { source, name: 'radar-site' });
    repoId = (await api.readyRepo()).id;
    const token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'second' })).token;
    second = startRunner(stack, token, 'second');
    await waitFor(async () => (await api.world()).runners.filter((r) => r.online).length === 2, 'two runners online', 60_000);
  }, 240_000);
  afterAll(async () => {
    second?.kill('SIGKILL');
    await stack?.stop();
    if (source) fs.rmSync(source, { recursive: true, force: true });
  });

  const compare = (a: { kind: string; id: string }, b: { kind: string; id: string }, merge = true) => api.ok<RadarCompareResult>('POST', '/api/radar/compare', { a, b, merge });
  const session = (id: string) => ({ kind: 'session', id });
  const pairOf = (x: string, y: string) => async () => {
    const snap = await api.ok<RadarSnapshot>('GET', '/api/radar');
    return snap.overlaps.find((o) => [o.a.id, o.b.id].sort().join() === [x, y].sort().join() && o.files.length > 0);
  };

  /** A shell session placed by the server (least-loaded runner first), running one command. */
  async function shell(title: string): Promise<SessionSummary> {
    const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell', title });
    return api.waitState(s.id, ['RUNNING'], 60_000);
  }
  const type = (s: SessionSummary, command: string) => api.ok('POST', `/api/sessions/${s.id}/input`, { data: `${command}\r` });

  let dta: DtaRunSummary;
  let x: SessionSummary;
  let y: SessionSummary;
  let z: SessionSummary;

  it('previews a session against a DTA run waiting for approval: its patch on its base commit, conflicting and clean', async () => {
    const created = await api.ok<DtaRunSummary>('POST', '/api/dta-runs', { repo_id: repoId, invocation: { tool: 'link_updater', glob: 'site/**', params: LINKS } });
    dta = await waitFor(async () => {
      const r = await api.ok<DtaRunSummary>('GET', `/api/dta-runs/${created.id}`);
      return ['waiting_for_approval', 'failed'].includes(r.status) ? r : null;
    }, 'the DTA dry-run to wait for approval', 120_000);
    expect(dta.status).toBe('waiting_for_approval');
    expect(dta.files).toEqual(expect.arrayContaining([CSS, GUIDE]));

    // Three sessions; the server spreads them over the two runners.
    x = await shell('preview X');
    y = await shell('preview Y');
    z = await shell('preview Z');
    const sessions = [x, y, z];
    // X and Y must be on different runners (for the next test); Z is whichever is left.
    const other = sessions.find((s) => s.runner_id !== x.runner_id)!;
    expect(other).toBeDefined();
    [y, z] = other === y ? [y, z] : [z, y];

    // X rewrites the .hero line the DTA also rewrites; Z retitles the guide (the DTA changes its line 3).
    await type(x, `sed -i "s#url('https://old.example.com/hero.jpg')#url('https://x.example.com/hero.jpg')#" ${CSS}`);
    await type(z, `sed -i '1s/.*/# The handbook/' ${GUIDE}`);
    await waitFor(pairOf(x.id, dta.id), 'the radar to pair X and the DTA run', 60_000);
    await waitFor(pairOf(z.id, dta.id), 'the radar to pair Z and the DTA run', 60_000);

    const conflict = await compare(session(x.id), { kind: 'dta', id: dta.id });
    expect(conflict.merge?.clean).toBe(false);
    const css = conflict.merge!.conflicts.find((c) => c.path === CSS)!;
    expect(css.kind).toBe('contents');
    // The DTA also rewrote the @import on line 1, next to it: git makes one region of both lines.
    expect(css.regions[0]!.a).toEqual(['@import "http://old.example.com/base.css";', ".hero { background: url('https://x.example.com/hero.jpg') no-repeat; }"]);
    expect(css.regions[0]!.b).toEqual(['@import "https://new.example.com/base.css";', ".hero { background: url('https://new.example.com/hero.jpg') no-repeat; }"]);
    const hunks = conflict.files.find((f) => f.path === CSS)!;
    expect(hunks.overlapping).toBe(true);
    expect(hunks.b.flatMap((h) => h.lines)).toContain("+.hero { background: url('https://new.example.com/hero.jpg') no-repeat; }");

    // Order does not matter: the DTA as side a.
    const clean = await compare({ kind: 'dta', id: dta.id }, session(z.id));
    expect(clean.merge).toMatchObject({ clean: true, conflicts: [] });
    const guide = clean.files.find((f) => f.path === GUIDE)!;
    expect(guide.a.length).toBeGreaterThan(0);
    expect(guide.b.flatMap((h) => h.lines)).toContain('+# The handbook');
    expect(guide.overlapping).toBe(false);

    // Nothing moved: the DTA still waits with the same patch, X's change is still uncommitted in its worktree.
    const after = await api.ok<DtaRunSummary>('GET', `/api/dta-runs/${dta.id}`);
    expect(after).toMatchObject({ status: 'waiting_for_approval', patch: dta.patch });
    const wt = fs.existsSync(join(stack.dataDir, 'runner', 'worktrees', x.id)) ? join(stack.dataDir, 'runner', 'worktrees', x.id) : join(stack.dataDir, 'second', 'worktrees', x.id);
    expect(gitIn(wt, 'status', '--porcelain')).toBe(` M ${CSS}\n`);
  }, 300_000);

  it('previews two sessions on two runners: the second sends its work as a patch against the merge base', async () => {
    expect(x.runner_id).not.toBe(y.runner_id);
    await type(y, `sed -i "s#url('https://old.example.com/hero.jpg')#url('https://y.example.com/hero.jpg')#" ${CSS}`);
    await waitFor(pairOf(x.id, y.id), 'the radar to pair X and Y', 60_000);

    const conflict = await compare(session(x.id), session(y.id));
    expect(conflict.merge?.clean).toBe(false);
    expect(conflict.merge!.conflicts.find((c) => c.path === CSS)!.regions[0]).toEqual({
      line: 2,
      a: [".hero { background: url('https://x.example.com/hero.jpg') no-repeat; }"],
      b: [".hero { background: url('https://y.example.com/hero.jpg') no-repeat; }"],
    });
    const hunks = conflict.files.find((f) => f.path === CSS)!;
    expect(hunks).toMatchObject({ overlapping: true });
    expect(hunks.b[0]!.lines).toContain("+.hero { background: url('https://y.example.com/hero.jpg') no-repeat; }");

    // Z changed another file: clean against both (one of the two pairs is across runners, Z's runner comparing).
    const clean = await compare(session(y.id), session(z.id));
    expect(clean.merge).toMatchObject({ clean: true, conflicts: [] });
    const cleanBack = await compare(session(z.id), session(x.id));
    expect(cleanBack.merge).toMatchObject({ clean: true, conflicts: [] });
  }, 180_000);

  it('answers bad input with a clear error, changes nothing and stays up', async () => {
    const wrongKind = await api.request('POST', '/api/radar/compare', { a: { kind: 'dta', id: x.id }, b: session(y.id) });
    expect(wrongKind.status).toBe(400);
    const self = await api.request('POST', '/api/radar/compare', { a: { kind: 'dta', id: dta.id }, b: { kind: 'dta', id: dta.id } });
    expect(self.status).toBe(400);
    const extra = await api.request('POST', '/api/radar/compare', { a: session(x.id), b: session(y.id), c: 1 });
    expect(extra.status).toBe(400);
    const unknown = await api.request('POST', '/api/radar/compare', { a: session(x.id), b: { kind: 'dta', id: 'dta_doesnotexist' } });
    expect(unknown.status).toBe(404);
    // The old two-session form still works.
    const legacy = await api.ok<RadarCompareResult>('POST', '/api/radar/compare', { session_a: x.id, session_b: y.id, merge: true });
    expect(legacy.merge?.clean).toBe(false);
    // A DTA run that has ended has no proposal left to preview.
    await api.ok('POST', `/api/approvals/${dta.approval_id}/decide`, { decision: 'deny' });
    await waitFor(async () => (await api.ok<DtaRunSummary>('GET', `/api/dta-runs/${dta.id}`)).status === 'denied', 'the DTA run to be denied');
    const ended = await api.request<RadarCompareResult>('POST', '/api/radar/compare', { a: session(x.id), b: { kind: 'dta', id: dta.id } });
    expect(ended.status).toBe(409);
    expect(!ended.json.ok && ended.json.error.message).toMatch(/is denied: only a run with a proposed patch/);
    expect((await api.ok<RadarSnapshot>('GET', '/api/radar')).overlaps.length).toBeGreaterThan(0);
  }, 120_000);
});

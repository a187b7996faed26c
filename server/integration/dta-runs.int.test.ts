import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DtaRunUpdatedSchema, type ApprovalSummary, type DtaRunSummary, type DtaRunUpdated } from '../../protocol';
import { DOC_FILES_BEFORE, gitIn, JSON_FILES, JSON_SCHEMA, makeRepo, SITE_FILES, TS_FILES } from '../../runner/dta/testing/fixture-repos';
import { Api, startStack, uiSocket, waitFor, type Stack } from './harness';

/**
 * DTA runs end to end: the real control plane, its real attached runner, real git. Each adapter
 * goes dry-run → approval card → Allow → apply → verify → commit on dta/<id>; Deny applies
 * nothing; overlapping runs wait for the lock while disjoint ones proceed; a failed verification
 * leaves the run failed and not passed (nothing downstream may start).
 */
const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };

describe('DTA runs through the control plane', () => {
  let stack: Stack;
  let api: Api;
  let repoId: string;
  let source: string;

  const run = (id: string) => api.ok<DtaRunSummary>('GET', `/api/dta-runs/${id}`);
  const waitStatus = (id: string, statuses: string[]) =>
    waitFor(async () => {
      const r = await run(id);
      return statuses.includes(r.status) ? r : null;
    }, `DTA run ${id} to reach ${statuses.join('|')}`, 120_000);
  const start = (invocation: Record<string, unknown>) => api.ok<DtaRunSummary>('POST', '/api/dta-runs', { repo_id: repoId, invocation });
  const decide = (r: DtaRunSummary, decision: 'allow' | 'deny') => api.ok<ApprovalSummary>('POST', `/api/approvals/${r.approval_id}/decide`, { decision });
  /** The runner's bare clone: where dta/<id> branches live. */
  const bare = () => {
    const repos = join(stack.dataDir, 'runner', 'repos');
    return join(repos, fs.readdirSync(repos).find((d) => d.startsWith(repoId))!);
  };
  const show = (ref: string, file: string) => execFileSync('git', ['show', `${ref}:${file}`], { cwd: bare(), encoding: 'utf8' });

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_VILLAGE_DEMO_REPO: '0' } });
    api = new Api(stack.url);
    await api.setupAdmin();
    source = makeRepo({ ...SITE_FILES, ...JSON_FILES, ...TS_FILES, ...DOC_FILES_BEFORE }, 'dta-int');
    fs.mkdirSync(join(source, 'docs/handbook'));
    gitIn(source, 'mv', 'docs/guide.md', 'docs/handbook/guide.md');
    gitIn(source, 'rm', '-q', 'docs/broken.md');
    gitIn(source, 'commit', '-q', '-m', 'move the guide');
    await api.ok('POST', '/api/repos', { source, name: 'dta-site' });
    repoId = (await api.readyRepo()).id;
  });
  afterAll(async () => {
    await stack?.stop();
    if (source) fs.rmSync(source, { recursive: true, force: true });
  });

  it('link_updater: dry-run → approval card with the diff → Allow → applied, verified, committed on dta/<id>; every phase pushed live on /ui', async () => {
    // The workshop and the village do not poll: each phase change is pushed as dta-run:updated.
    const socket = await uiSocket(stack.url, api.cookie);
    const pushed: DtaRunUpdated[] = [];
    socket.on('dta-run:updated', (u) => pushed.push(DtaRunUpdatedSchema.parse(u)));
    const created = await start({ tool: 'link_updater', glob: 'site/**', params: LINKS });
    expect(created.branch).toBe(`dta/${created.id}`);
    const waiting = await waitStatus(created.id, ['waiting_for_approval', 'failed']);
    expect(waiting.status).toBe('waiting_for_approval');
    expect(waiting.output).toMatchObject({ ok: true, phase: 'dry-run', proposed_changes: { files: 3, link_updates: 15 } });
    const card = (await api.ok<ApprovalSummary[]>('GET', '/api/approvals?state=pending')).find((a) => a.id === waiting.approval_id)!;
    expect(card).toMatchObject({ category: 'dta', state: 'pending', session_title: 'DTA link_updater', repo_id: repoId, context: { source: 'dta', changed_files: 3 } });
    expect(card.context.diff_stat).toContain('+<a href="https://new.example.com/about?x=1#team">About</a>');
    await decide(waiting, 'allow');
    const done = await waitStatus(created.id, ['verified', 'failed']);
    expect(done.reason).toMatch(/Verified; committed/);
    expect(done).toMatchObject({ status: 'verified', passed: true, output: { phase: 'verify', verifier: { passed: true } } });
    expect(show(done.branch, 'site/index.html')).toContain('href="https://new.example.com/about?x=1#team"');
    expect(show(done.commit_sha!, 'README.md')).toContain('http://old.example.com/readme');
    expect(gitIn(source, 'status', '--porcelain')).toBe(''); // the source repository is untouched
    const mine = await waitFor(() => (pushed.some((u) => u.id === created.id && u.status === 'verified') ? pushed.filter((u) => u.id === created.id) : null), 'the verified push');
    const phases = mine.map((u) => u.status).filter((st, i, all) => st !== all[i - 1]);
    expect(phases).toEqual(['queued', 'proposing', 'waiting_for_approval', 'applying', 'verified']);
    expect(mine.at(-1)).toMatchObject({ passed: true, has_patch: true, commit_sha: done.commit_sha });
    expect(mine.find((u) => u.status === 'waiting_for_approval')).toMatchObject({ approval_id: waiting.approval_id, has_patch: true });
    socket.close();

    // Events and artifacts on the run: the timeline, and every JSON artifact downloadable after the worktree is gone.
    expect(done.events!.map((e) => e.type)).toEqual(['dta_started', 'dta_proposed', 'dta_applied', 'dta_verified']);
    // The dry-run's and the apply's (each run writes its own, stamped).
    const names = new Set(done.artifacts!.map((p) => p.replace(/^.*\/[0-9TZ]+-/, '')));
    expect(names).toEqual(new Set(['applied.json', 'baseline.json', 'proposed.json', 'verify.json']));
    const verifyPath = done.artifacts!.filter((p) => p.endsWith('-verify.json')).at(-1)!;
    const res = await fetch(`${stack.url}/api/dta-runs/${done.id}/artifacts?path=${encodeURIComponent(verifyPath)}`, { headers: { cookie: api.cookie } });
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename=".*-verify\.json"/);
    expect(JSON.parse(await res.text())).toMatchObject({ phase: 'verify', verifier: { passed: true } });
    expect((await api.request('GET', `/api/dta-runs/${done.id}/artifacts?path=.runs/nope.json`)).status).toBe(404);
    expect((await api.request('GET', `/api/dta-runs/${done.id}/artifacts`)).status).toBe(400);
  });

  it('Deny: nothing is applied, the run is denied and not passed', async () => {
    const created = await start({ tool: 'link_updater', glob: 'site/**', params: LINKS });
    const waiting = await waitStatus(created.id, ['waiting_for_approval']);
    await decide(waiting, 'deny');
    const done = await waitStatus(created.id, ['denied']);
    expect(done).toMatchObject({ passed: false, commit_sha: null });
    expect(done.reason).toMatch(/Denied by .*nothing was applied/);
    expect(execFileSync('git', ['branch', '--list', done.branch, '--format=%(objectname)'], { cwd: bare(), encoding: 'utf8' }).trim()).toBe(gitIn(source, 'rev-parse', 'HEAD').trim());
  });

  it('overlapping runs serialise through the lock ("waiting for lock held by …"); a disjoint one proceeds in parallel', async () => {
    const a = await start({ tool: 'link_updater', glob: 'site/docs/**', params: LINKS });
    const aWaiting = await waitStatus(a.id, ['waiting_for_approval']);
    const b = await start({ tool: 'link_updater', glob: 'site/**/*.md', params: LINKS });
    const c = await start({ tool: 'link_updater', glob: 'site/css/**', params: LINKS });
    const bWaiting = await waitStatus(b.id, ['waiting_for_lock']);
    expect(bWaiting.reason).toBe(`waiting for lock held by ${a.id} (site/docs/guide.md)`);
    const cWaiting = await waitStatus(c.id, ['waiting_for_approval']); // disjoint: not held up by a
    await decide(aWaiting, 'allow');
    await waitStatus(a.id, ['verified']);
    const bNext = await waitStatus(b.id, ['waiting_for_approval']); // a ended: b got the lock
    await decide(bNext, 'allow');
    await decide(cWaiting, 'allow');
    expect((await waitStatus(b.id, ['verified', 'failed'])).status).toBe('verified');
    expect((await waitStatus(c.id, ['verified', 'failed'])).status).toBe('verified');
  });

  it('json_schema_migrator, rename_refactor and intra_repo_link_fixer: gate → Allow → verified on their branches', async () => {
    const cases = [
      { invocation: { tool: 'json_schema_migrator', params: { schema: JSON_SCHEMA, renames: { title: 'name' } } }, file: 'config/b.json', expect: '"name": "b"' },
      { invocation: { tool: 'rename_refactor', params: { from: 'addNumbers', to: 'sum', declared_in: 'src/math.ts' } }, file: 'src/main.ts', expect: 'sum(1, 2) + sum(3, 4)' },
      { invocation: { tool: 'intra_repo_link_fixer', params: { since: 'HEAD~1' } }, file: 'docs/index.md', expect: '[the guide](handbook/guide.md#install)' },
    ];
    for (const c of cases) {
      const created = await start(c.invocation);
      const waiting = await waitStatus(created.id, ['waiting_for_approval', 'failed']);
      expect(waiting.status, `${c.invocation.tool}: ${waiting.reason}`).toBe('waiting_for_approval');
      await decide(waiting, 'allow');
      const done = await waitStatus(created.id, ['verified', 'failed']);
      expect(done.status, `${c.invocation.tool}: ${done.reason}`).toBe('verified');
      expect(done.passed).toBe(true);
      expect(show(done.branch, c.file)).toContain(c.expect);
    }
  });

  it('a failed verification marks the run failed and not passed, with the reason in words', async () => {
    // docs/setup.md links nowhere after this commit: no move explains it, so "every local target exists" fails.
    fs.writeFileSync(join(source, 'docs/setup.md'), '# Setup\n\n[gone](nowhere.md)\n');
    gitIn(source, 'commit', '-qam', 'a link to nowhere');
    const created = await start({ tool: 'intra_repo_link_fixer', params: {} });
    const waiting = await waitStatus(created.id, ['waiting_for_approval', 'failed']);
    expect(waiting.output?.verifier.passed).toBe(false); // the dry-run's verifier already says so on the card
    await decide(waiting, 'allow');
    const done = await waitStatus(created.id, ['verified', 'failed']);
    expect(done).toMatchObject({ status: 'failed', passed: false });
    expect(done.reason).toMatch(/verification failed: \d+ local links still point to nothing/);
  });

  it('bad input gets a clear error and changes nothing', async () => {
    const before = (await api.ok<DtaRunSummary[]>('GET', '/api/dta-runs')).length;
    const bad = await api.request('POST', '/api/dta-runs', { repo_id: repoId, invocation: { tool: 'sed', params: {} } });
    expect(bad.status).toBe(400);
    const missing = await api.request('POST', '/api/dta-runs', { repo_id: 'repo_nope', invocation: { tool: 'link_updater', params: LINKS } });
    expect(missing.status).toBe(404);
    expect((await api.ok<DtaRunSummary[]>('GET', '/api/dta-runs')).length).toBe(before);
  });
});

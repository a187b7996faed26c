import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuestSummary } from '../../protocol';
import { gitIn, makeRepo, SITE_FILES } from '../../runner/dta/testing/fixture-repos';
import { Api, ROOT, startStack, waitFor, type Stack } from './harness';

/**
 * Quests end to end: the real control plane, its real attached runner, real git. A link-move goal
 * is planned by the rule planner into DTA steps, gated, applied, verified, receipted and replayed;
 * a goal that needs an agent runs the fake headless agent as a work item whose tests fail, and
 * the quest branch is left exactly at its base.
 */
const FAKE_AGENT = resolve(ROOT, 'e2e/fixtures/fake-agent/fake-headless.mjs');

describe('quests through the control plane', () => {
  let stack: Stack;
  let api: Api;
  let repoId: string;
  let source: string;

  const get = (id: string) => api.ok<QuestSummary>('GET', `/api/quests/${id}`);
  const waitQuest = (id: string, ok: (q: QuestSummary) => boolean, what: string) => waitFor(async () => {
    const q = await get(id);
    return ok(q) ? q : null;
  }, what, 180_000);
  const step = (q: QuestSummary, id: string) => q.steps.find((s) => s.step_id === id)!;
  const bare = () => {
    const repos = join(stack.dataDir, 'runner', 'repos');
    return join(repos, fs.readdirSync(repos).find((d) => d.startsWith(repoId))!);
  };
  const show = (ref: string, file: string) => execFileSync('git', ['show', `${ref}:${file}`], { cwd: bare(), encoding: 'utf8' });

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_VILLAGE_DEMO_REPO: '0', AGENT_RUNNER_WORKITEM_AGENTS: JSON.stringify({ fake: [process.execPath, FAKE_AGENT] }) } });
    api = new Api(stack.url);
    await api.setupAdmin();
    source = makeRepo({ ...SITE_FILES, 'package.json': '{"name":"q","scripts":{"test":"exit 1"}}\n' }, 'quest-int');
    await api.ok('POST', '/api/repos', { source, name: 'quest-site' });
    repoId = (await api.readyRepo()).id;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    if (source) fs.rmSync(source, { recursive: true, force: true });
  });

  it('link move: rule plan → dry-run → gate → apply → verify → receipts → replay verified', async () => {
    const created = await api.request<QuestSummary>('POST', '/api/quests', { repo_id: repoId, goal: 'Move every link from old.example.com to new.example.com' });
    expect(created.status).toBe(201);
    const q = created.json.ok ? created.json.data : null;
    expect(q).toMatchObject({ state: 'planned', planner: 'rule', plan: { metadata: { planner: 'rule', deterministic: true } } });
    expect(q!.plan_input_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(q!.plan.steps.map((s) => s.step_id)).toEqual(['dry_run', 'gate', 'apply', 'verify']);
    // The same goal again: the same hash and a byte-identical plan (from the cache).
    const again = await api.ok<QuestSummary>('POST', '/api/quests', { repo_id: repoId, goal: '  move every link from OLD.example.com to new.example.com ' });
    expect(again.plan_input_hash).toBe(q!.plan_input_hash);
    expect(JSON.stringify(again.plan.steps)).toBe(JSON.stringify(q!.plan.steps));

    await api.ok('POST', `/api/quests/${q!.id}/run`);
    const gated = await waitQuest(q!.id, (x) => step(x, 'gate').state === 'waiting_for_approval' || x.state === 'failed', 'the gate to wait');
    expect(gated.state).toBe('waiting_for_approval');
    expect(step(gated, 'dry_run')).toMatchObject({ state: 'succeeded', proposal: { files: expect.arrayContaining(['site/index.html']) } });
    expect(step(gated, 'dry_run').proposal!.patch).toContain('+<a href="https://new.example.com/about?x=1#team">About</a>');
    // Run twice: refused, nothing changes.
    expect((await api.request('POST', `/api/quests/${q!.id}/run`)).status).toBe(409);

    await api.ok('POST', `/api/quests/${q!.id}/steps/gate/decide`, { decision: 'allow' });
    const done = await waitQuest(q!.id, (x) => x.state === 'succeeded' || x.state === 'failed', 'the quest to end');
    expect(done.reason).toMatch(/All 4 steps succeeded/);
    const apply = step(done, 'apply');
    expect(apply.result).toMatchObject({ status: 'success', metrics: { files_touched: step(done, 'dry_run').proposal!.files.length } });
    expect(apply.result!.metrics.files_touched).toBeGreaterThan(2);
    expect(apply.receipt).toMatchObject({ replay: 'rerun', after_hash: apply.result!.output_hash });
    expect(show(done.branch, 'site/index.html')).toContain('href="https://new.example.com/about?x=1#team"');
    expect(gitIn(source, 'status', '--porcelain')).toBe('');

    const receipt = await fetch(`${stack.url}/api/quests/${q!.id}/steps/apply/receipt`, { headers: { cookie: api.cookie } });
    expect(receipt.headers.get('content-disposition')).toContain('RECEIPT-');
    expect(((await receipt.json()) as { after_hash: string }).after_hash).toBe(apply.result!.output_hash);

    await api.ok('POST', `/api/quests/${q!.id}/steps/apply/replay`);
    const replayed = await waitQuest(q!.id, (x) => step(x, 'apply').replay !== null, 'the replay');
    expect(step(replayed, 'apply').replay).toMatchObject({ verified: true, replay: 'rerun', actual_hash: apply.result!.output_hash });
  }, 400_000);

  it('an agent step whose tests fail is rolled back; its dependents are skipped, saying why', async () => {
    const q = await api.ok<QuestSummary>('POST', '/api/quests', { repo_id: repoId, goal: 'Add input validation to the signup handler', agent_provider: 'fake', test_command: 'npm test' });
    expect(q.plan.steps.map((s) => s.skill)).toEqual(['agent.fake', 'test']);
    await api.ok('POST', `/api/quests/${q.id}/run`);
    const done = await waitQuest(q.id, (x) => x.state === 'failed' || x.state === 'succeeded', 'the agent quest to end');
    expect(done.state).toBe('failed');
    expect(step(done, 'agent')).toMatchObject({ state: 'failed', result: { status: 'failure', error: 'Tests failed' } });
    expect(step(done, 'test')).toMatchObject({ state: 'skipped' });
    expect(step(done, 'agent').result!.metrics.files_touched).toBe(1);
    // Rolled back: the quest branch is still the base commit.
    expect(execFileSync('git', ['rev-parse', done.branch], { cwd: bare(), encoding: 'utf8' }).trim()).toBe(gitIn(source, 'rev-parse', 'HEAD').trim());
  }, 300_000);

  it('bad input gets a clear error and changes nothing', async () => {
    const before = (await api.ok<QuestSummary[]>('GET', '/api/quests')).length;
    const cases: [unknown, number, RegExp][] = [
      [{ repo_id: repoId, goal: '' }, 400, /goal/],
      [{ repo_id: repoId, goal: 'do it', planner: 'oracle' }, 400, /No planner oracle/],
      [{ repo_id: 'nope', goal: 'rename `a` to `b`' }, 404, /repository/],
      [{ repo_id: repoId, goal: 'do it', extra: 1 }, 400, /./],
      ['{not json', 400, /./],
    ];
    for (const [body, status, message] of cases) {
      const res = await api.request('POST', '/api/quests', body);
      expect(res.status).toBe(status);
      expect(res.json.ok ? '' : res.json.error.message).toMatch(message);
    }
    expect((await api.request('POST', '/api/quests/qst_nothere/run')).status).toBe(404);
    expect((await api.ok<QuestSummary[]>('GET', '/api/quests')).length).toBe(before);
  });
});

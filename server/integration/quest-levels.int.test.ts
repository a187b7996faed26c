import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuestSummary } from '../../protocol';
import { makeRepo } from '../../runner/dta/testing/fixture-repos';
import { Api, ROOT, startStack, waitFor, type Stack } from './harness';

/**
 * Quest execution through the real control plane and its attached runner, real git: a DAG level
 * of two agent steps and a blueprint step runs in parallel worktrees and is merged in step id
 * order before the level after it (a test step) starts; a blueprint step's receipt replays by
 * re-running it; two steps of one level that change the same file: the later one fails with the
 * file named and nothing of it on the quest branch. Plans come from the LLM planner's fake CLI
 * answering with a plan file (the planner validates them like any plan).
 */
const FAKE_AGENT = resolve(ROOT, 'e2e/fixtures/fake-agent/fake-headless.mjs');
const FAKE_PLANNER = resolve(ROOT, 'server/planner/testing/fake-planner-cli.mjs');
const BLUEPRINT = {
  name: 'stamp-header',
  description: 'Writes HEADER.txt from its text parameter',
  command: `python3 -c "import json, sys; p = json.load(sys.stdin); open('HEADER.txt', 'w').write(p['text'] + '\\n')"`,
  parameters_schema: { type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1 } }, additionalProperties: false },
  timeout_seconds: 60,
};

describe('quest levels through the control plane', () => {
  let stack: Stack;
  let api: Api;
  let repoId: string;
  let source: string;
  const tmp = fs.mkdtempSync(join(os.tmpdir(), 'quest-levels-'));
  const planFile = join(tmp, 'plan.json');
  const blueprintsDir = join(tmp, 'blueprints');

  const get = (id: string) => api.ok<QuestSummary>('GET', `/api/quests/${id}`);
  const waitQuest = (id: string, ok: (q: QuestSummary) => boolean, what: string) =>
    waitFor(async () => {
      const q = await get(id);
      return ok(q) ? q : null;
    }, what, 240_000);
  const step = (q: QuestSummary, id: string) => q.steps.find((s) => s.step_id === id)!;
  const bare = () => {
    const repos = join(stack.dataDir, 'runner', 'repos');
    return join(repos, fs.readdirSync(repos).find((d) => d.startsWith(repoId))!);
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: bare(), encoding: 'utf8' });
  const plan = async (goal: string, steps: unknown[]) => {
    fs.writeFileSync(planFile, JSON.stringify(steps));
    return api.ok<QuestSummary>('POST', '/api/quests', { repo_id: repoId, goal, planner: 'claude', agent_provider: 'fake' });
  };

  beforeAll(async () => {
    // A root server's attached runner is an unprivileged user: it must be able to read the blueprints.
    fs.chmodSync(tmp, 0o755);
    fs.mkdirSync(blueprintsDir, { mode: 0o755 });
    fs.writeFileSync(join(blueprintsDir, 'stamp-header.json'), JSON.stringify(BLUEPRINT));
    stack = await startStack({
      env: {
        AGENT_VILLAGE_DEMO_REPO: '0',
        AGENT_RUNNER_WORKITEM_AGENTS: JSON.stringify({ fake: [process.execPath, FAKE_AGENT] }),
        AGENT_VILLAGE_PLANNER_CLI: JSON.stringify([process.execPath, FAKE_PLANNER, '--plan-file', planFile]),
        AGENT_RUNNER_BLUEPRINTS_DIR: blueprintsDir,
      },
    });
    api = new Api(stack.url);
    await api.setupAdmin();
    source = makeRepo({ 'README.md': '# levels\n', 'src/shared.txt': 'base\n' }, 'quest-levels');
    await api.ok('POST', '/api/repos', { source, name: 'quest-levels' });
    repoId = (await api.readyRepo()).id;
    await waitFor(async () => ((await api.ok<{ agents: { name: string }[] }>('GET', '/api/agents')).agents.some((a) => a.name === 'stamp-header') ? true : null), 'the blueprint to be registered', 60_000);
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    for (const d of [tmp, source]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a level of two agent steps and a blueprint step runs in parallel, merged in step id order, before the next level', async () => {
    const q = await plan('build the three parts', [
      { step_id: 'part_b', skill: 'agent.fake', params: { prompt: 'write b.txt=b' }, depends_on: [], reason: 'b' },
      { step_id: 'part_a', skill: 'agent.fake', params: { prompt: 'write a.txt=a' }, depends_on: [], reason: 'a' },
      { step_id: 'stamp', skill: 'blueprint.stamp-header', params: { text: 'hello' }, depends_on: [], reason: 'a deterministic blueprint' },
      { step_id: 'check', skill: 'test', params: { command: 'test -f a.txt && test -f b.txt && grep -qx hello HEADER.txt' }, depends_on: ['part_a', 'part_b', 'stamp'], reason: 'all three merged' },
    ]);
    await api.ok('POST', `/api/quests/${q.id}/run`);
    const done = await waitQuest(q.id, (x) => x.state === 'succeeded' || x.state === 'failed', 'the quest to end');
    expect(done.steps.map((s) => [s.step_id, s.state, s.result?.error ?? ''])).toEqual([
      ['part_b', 'succeeded', ''],
      ['part_a', 'succeeded', ''],
      ['stamp', 'succeeded', ''],
      ['check', 'succeeded', ''],
    ]);
    expect(done.state).toBe('succeeded');
    // One level: every step of it started from the same base commit.
    const bases = ['part_a', 'part_b', 'stamp'].map((s) => step(done, s).receipt!.before_commit);
    expect(new Set(bases).size).toBe(1);
    // Merged in step id order: part_a, part_b, stamp (first parents of the quest branch, newest last).
    const firstParents = git('rev-list', '--first-parent', '--reverse', `${bases[0]}..${done.branch}`).trim().split('\n');
    expect(firstParents[0]).toBe(step(done, 'part_a').receipt!.after_commit);
    expect(git('rev-parse', `${firstParents[1]}^2`).trim()).toBe(step(done, 'part_b').receipt!.after_commit);
    expect(git('rev-parse', `${firstParents[2]}^2`).trim()).toBe(step(done, 'stamp').receipt!.after_commit);
    expect(git('show', `${done.branch}:HEADER.txt`)).toBe('hello\n');
    // Nothing of the step worktrees or branches is left.
    expect(git('branch', '--list', `agent/${q.id}--*`).trim()).toBe('');
    expect(fs.readdirSync(join(stack.dataDir, 'runner', 'worktrees')).filter((d) => d.startsWith(`${q.id}--`))).toEqual([]);

    expect(step(done, 'stamp').receipt).toMatchObject({ replay: 'rerun', blueprint: { name: 'stamp-header', parameters: { text: 'hello' } } });
    await api.ok('POST', `/api/quests/${q.id}/steps/stamp/replay`);
    const replayed = await waitQuest(q.id, (x) => step(x, 'stamp').replay !== null, 'the blueprint replay');
    expect(step(replayed, 'stamp').replay).toMatchObject({ verified: true, replay: 'rerun', actual_hash: step(done, 'stamp').result!.output_hash });
  }, 400_000);

  it('two steps of a level change the same file: the later one (by step id) fails naming it, rolled back; on_error continue lets the rest go on', async () => {
    const q = await plan('two edits of one file', [
      { step_id: 'edit_1', skill: 'agent.fake', params: { prompt: 'write src/shared.txt=one' }, depends_on: [], reason: 'first' },
      { step_id: 'edit_2', skill: 'agent.fake', params: { prompt: 'write src/shared.txt=two; write extra.txt=x' }, depends_on: [], on_error: 'continue', reason: 'second' },
      { step_id: 'after', skill: 'agent.fake', params: { prompt: 'write after.txt=ok' }, depends_on: ['edit_1'], reason: 'independent of edit_2' },
    ]);
    await api.ok('POST', `/api/quests/${q.id}/run`);
    const done = await waitQuest(q.id, (x) => x.state === 'succeeded' || x.state === 'failed', 'the quest to end');
    expect(step(done, 'edit_1').state).toBe('succeeded');
    expect(step(done, 'edit_2')).toMatchObject({ state: 'failed', result: { status: 'failure', error: 'Merge conflict with the steps merged before it (edit_1) in src/shared.txt; the step was rolled back' }, receipt: null });
    expect(step(done, 'after').state).toBe('succeeded');
    expect(done.state).toBe('failed');
    expect(git('show', `${done.branch}:src/shared.txt`)).toBe('one\n');
    expect(git('ls-tree', '-r', '--name-only', done.branch).split('\n')).not.toContain('extra.txt');
    expect(git('show', `${done.branch}:after.txt`)).toBe('ok\n');
  }, 400_000);

  it('a conflicting step with on_error retry runs again alone, from the merged result, and succeeds', async () => {
    const q = await plan('two edits, the second retried', [
      { step_id: 'edit_1', skill: 'agent.fake', params: { prompt: 'write src/shared.txt=first' }, depends_on: [], reason: 'first' },
      { step_id: 'edit_2', skill: 'agent.fake', params: { prompt: 'write src/shared.txt=second' }, depends_on: [], on_error: 'retry', retry_count: 1, reason: 'second, retried' },
    ]);
    await api.ok('POST', `/api/quests/${q.id}/run`);
    const done = await waitQuest(q.id, (x) => x.state === 'succeeded' || x.state === 'failed', 'the quest to end');
    expect(done.state).toBe('succeeded');
    expect(step(done, 'edit_2')).toMatchObject({ state: 'succeeded', attempts: 2 });
    // The retry's base is the merged level: edit_1's commit.
    expect(step(done, 'edit_2').receipt!.before_commit).toBe(step(done, 'edit_1').receipt!.after_commit);
    expect(git('show', `${done.branch}:src/shared.txt`)).toBe('second\n');
  }, 400_000);

  it('agent steps on the attached runner: sandboxed (its data dir is not there) and tool calls counted from the CLI hooks', async () => {
    // A file only the runner's own user could read, were the agent not in the sandbox.
    const secret = join(stack.dataDir, 'runner', 'planted-secret.txt');
    fs.writeFileSync(secret, 'runner-only\n', { mode: 0o644 });
    const before = git('rev-parse', 'main').trim();
    const q = await plan('sandbox and hooks', [
      { step_id: 'peek', skill: 'agent.fake', params: { prompt: `write ok.txt=1; read ${secret}` }, depends_on: [], on_error: 'continue', reason: 'tries the runner data dir' },
      { step_id: 'busy', skill: 'agent.fake', params: { prompt: 'write one.txt=1; write two.txt=2' }, depends_on: [], on_error: 'continue', constraints: { max_tool_ops: 2 }, reason: 'one tool call too many' },
      { step_id: 'fine', skill: 'agent.fake', params: { prompt: 'write fine.txt=1; write fine2.txt=2' }, depends_on: [], reason: 'within its budget' },
    ]);
    await api.ok('POST', `/api/quests/${q.id}/run`);
    const done = await waitQuest(q.id, (x) => x.state === 'succeeded' || x.state === 'failed', 'the quest to end');
    expect(step(done, 'peek')).toMatchObject({ state: 'failed', result: { status: 'failure', error: 'the agent exited 1' } });
    // The agent process + 2 PreToolUse (the second denied by the hook) → 3 > 2.
    expect(step(done, 'busy')).toMatchObject({ state: 'denied', result: { status: 'denied', denial_reason: 'Exceeded max tool ops: 3 > 2' } });
    expect(step(done, 'fine')).toMatchObject({ state: 'succeeded', result: { metrics: { tool_ops_count: 3 } } });
    const files = git('ls-tree', '-r', '--name-only', done.branch).trim().split('\n');
    expect(files).toEqual(expect.arrayContaining(['fine.txt', 'fine2.txt']));
    for (const f of ['ok.txt', 'stolen.txt', 'one.txt', 'two.txt']) expect(files).not.toContain(f);
    expect(git('rev-parse', `${done.branch}~1`).trim()).toBe(before);
  }, 400_000);

  it('the rule planner runs a blueprint the goal names, with the context as its parameters', async () => {
    const q = await api.ok<QuestSummary>('POST', '/api/quests', { repo_id: repoId, goal: 'Run `stamp-header` for the release', context_summary: '{"text": "release"}' });
    expect(q.plan.steps.map((s) => [s.skill, s.params])).toEqual([['blueprint.stamp-header', { text: 'release' }]]);
    const bad = await api.request('POST', '/api/quests', { repo_id: repoId, goal: 'Run `stamp-header` again', context_summary: '{"text": 7}' });
    expect(bad.status).toBe(400);
    await api.ok('POST', `/api/quests/${q.id}/run`);
    const done = await waitQuest(q.id, (x) => x.state === 'succeeded' || x.state === 'failed', 'the quest to end');
    expect(done.state).toBe('succeeded');
    expect(git('show', `${done.branch}:HEADER.txt`)).toBe('release\n');
  }, 400_000);
});

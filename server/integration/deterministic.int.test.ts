import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentCatalog, MeDetails, Result, RunSummary, SessionSummary } from '../../protocol';
import { Api, call, ROOT, runnerSocket, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/**
 * Deterministic agents with two real runners, each with its own blueprints folder: registration
 * carries the blueprints, runs go only to the runner that owns the blueprint, a runner's agents
 * leave with it and come back with it, and a run's result reaches its parent session.
 */
const PASSWORD = 'a long enough password';

/** Prints where it ran and what it got (parameters on stdin and as argv). */
const WHERE = `python3 -c "import json, os, sys; print(json.dumps({'cwd': os.getcwd(), 'run': os.environ['AGENT_VILLAGE_RUN_ID'], 'stdin': json.load(sys.stdin), 'argv': sys.argv[1:]}))"`;

function blueprint(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    description: `${name}: says where it ran`,
    command: WHERE,
    parameters_schema: {
      type: 'object',
      required: ['message'],
      properties: { message: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 0, default: 1 }, url: { type: 'string', format: 'uri' } },
      additionalProperties: false,
    },
    ...extra,
  };
}

describe('deterministic agents: registration, routing between two runners, disconnect, callback', () => {
  let stack: Stack;
  let api: Api;
  let token: string;
  const dirs: Record<string, string> = {};
  const procs: Record<string, ChildProcess> = {};

  function startRunner(name: string) {
    procs[name] = spawn(
      process.execPath,
      ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', name, '--data-dir', join(stack.dataDir, `runner-${name}`), '--blueprints-dir', dirs[name]!],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  const agents = () => api.ok<AgentCatalog>('GET', '/api/agents');
  const runnerId = async (name: string) => (await api.world()).runners.find((r) => r.name === name)!.id;
  const waitRun = (id: string, states = ['completed', 'failed']) =>
    waitFor(async () => {
      const r = await api.ok<RunSummary>('GET', `/api/runs/${id}`);
      return states.includes(r.status) ? r : null;
    }, `run ${id} to end`);

  beforeAll(async () => {
    stack = await startStack({ attachedRunner: false, env: { AGENT_VILLAGE_PING_INTERVAL_MS: '500', AGENT_VILLAGE_PING_TIMEOUT_MS: '1000' } });
    api = new Api(stack.url);
    await api.setupAdmin();
    token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'fleet' })).token;
    for (const name of ['alpha', 'beta']) {
      dirs[name] = join(stack.dataDir, `blueprints-${name}`);
      fs.mkdirSync(dirs[name]!, { recursive: true });
      fs.writeFileSync(join(dirs[name]!, `${name}-echo.json`), JSON.stringify(blueprint(`${name}-echo`)));
      fs.writeFileSync(join(dirs[name]!, 'shared.json'), JSON.stringify(blueprint('shared')));
    }
    fs.writeFileSync(join(dirs.alpha!, 'broken.json'), '{ "name": ');
    startRunner('alpha');
    startRunner('beta');
    await waitFor(async () => (await agents()).agents.length === 4, 'both runners to register their blueprints');
  });
  afterAll(async () => {
    Object.values(procs).forEach((p) => p.kill('SIGKILL'));
    await stack?.stop();
  });

  it('registration: the agents of each runner are listed with their schema; a bad file is reported, not fatal', async () => {
    const { agents: list, problems } = await agents();
    expect(list.map((a) => `${a.name}@${a.runner_name}`)).toEqual(['alpha-echo@alpha', 'beta-echo@beta', 'shared@alpha', 'shared@beta']);
    const alphaEcho = list[0]!;
    expect(alphaEcho).toMatchObject({ type: 'procedural', runner_online: true, timeout_seconds: 300, command: WHERE });
    expect(alphaEcho.parameters_schema).toMatchObject({ type: 'object', required: ['message'] });
    expect(problems).toEqual([expect.objectContaining({ runner_name: 'alpha', file: 'broken.json', reason: expect.stringMatching(/not valid JSON/) })]);
    const world = await api.world();
    expect(world.agents).toHaveLength(4);
  });

  it('runs go to the runner that owns the blueprint: 201, result with raw stdout, parsed JSON and exit code', async () => {
    const created = await api.request<RunSummary>('POST', '/api/runs', { agent_name: 'alpha-echo', parameters: { message: `it's "quoted"; $(id) | x` } });
    expect(created.status).toBe(201);
    const run = created.json.ok ? created.json.data : null;
    expect(run).toMatchObject({ agent_name: 'alpha-echo', runner_name: 'alpha', runner_id: await runnerId('alpha') });
    expect(['queued', 'running']).toContain(run!.status);
    const done = await waitRun(run!.id);
    expect(done.status).toBe('completed');
    expect(done.exit_code).toBe(0);
    expect(done.result_type).toBe('procedural');
    const data = done.result_data as { cwd: string; run: string; stdin: unknown; argv: string[] };
    expect(data.cwd).toBe(dirs.alpha);
    expect(data.run).toBe(run!.id);
    // Defaults are filled in; the message reaches the program as one argv element, never a shell.
    expect(data.stdin).toEqual({ message: `it's "quoted"; $(id) | x`, count: 1 });
    expect(data.argv).toEqual(['--message', `it's "quoted"; $(id) | x`, '--count', '1']);
    expect(done.result_text).toBe(`${JSON.stringify(done.result_data).replaceAll('":', '": ').replaceAll(',"', ', "')}\n`);

    const beta = await waitRun((await api.ok<RunSummary>('POST', '/api/runs', { agent_name: 'beta-echo', parameters: { message: 'b' } })).id);
    expect((beta.result_data as { cwd: string }).cwd).toBe(dirs.beta);
    expect(beta.runner_name).toBe('beta');
  });

  it('the same name on two runners needs runner_id; bad parameters, unknown agents and resume are refused', async () => {
    const both = await api.request('POST', '/api/runs', { agent_name: 'shared', parameters: { message: 'x' } });
    expect(both.status).toBe(409);
    const onBeta = await api.ok<RunSummary>('POST', '/api/runs', { agent_name: 'shared', parameters: { message: 'x' }, runner_id: await runnerId('beta') });
    expect(((await waitRun(onBeta.id)).result_data as { cwd: string }).cwd).toBe(dirs.beta);

    const bad = await api.request<RunSummary>('POST', '/api/runs', { agent_name: 'alpha-echo', parameters: { count: -1, url: 'not a url', extra: 1 } });
    expect(bad.status).toBe(400);
    const err = !bad.json.ok ? bad.json.error : null;
    expect(err?.message).toMatch(/Invalid parameters for alpha-echo/);
    expect(err?.issues?.map((i) => i.path).sort()).toEqual(['count', 'extra', 'message', 'url']);

    expect((await api.request('POST', '/api/runs', { agent_name: 'nobody', parameters: {} })).status).toBe(404);
    const resume = await api.request('POST', '/api/runs', { agent_name: 'alpha-echo', mode: 'resume', parameters: { message: 'x' } });
    expect(resume.status).toBe(400);
    expect(!resume.json.ok && resume.json.error.message).toBe('Deterministic agents do not support resumption');
  });

  it('another runner can never report on (claim) a run it does not own', async () => {
    const run = await waitRun((await api.ok<RunSummary>('POST', '/api/runs', { agent_name: 'alpha-echo', parameters: { message: 'mine' } })).id);
    const mallory = await runnerSocket(stack.url, token);
    const reg = await call(mallory, 'runner:register', { name: 'mallory', hostname: 'h', version: '1', capacity: 1, providers: [], sessions: [] });
    expect(reg.ok).toBe(true);
    const forged = await call(mallory, 'run:updates', [
      { type: 'RUN_FINISHED', run_id: run.id, ts: Date.now(), status: 'failed', result: null, error: 'stolen' },
    ]);
    expect(forged).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    mallory.close();
    expect((await api.ok<RunSummary>('GET', `/api/runs/${run.id}`)).status).toBe('completed');
  });

  it('a runner that disconnects takes its agents with it; they come back when it registers again; folder changes follow', async () => {
    procs.beta!.kill('SIGTERM');
    await waitFor(async () => (await agents()).agents.every((a) => a.runner_name !== 'beta'), 'beta’s agents to go');
    expect((await api.request('POST', '/api/runs', { agent_name: 'beta-echo', parameters: { message: 'x' } })).status).toBe(404);
    // Only alpha offers "shared" now: no runner_id needed.
    expect((await waitRun((await api.ok<RunSummary>('POST', '/api/runs', { agent_name: 'shared', parameters: { message: 'x' } })).id)).runner_name).toBe('alpha');

    startRunner('beta');
    await waitFor(async () => (await agents()).agents.some((a) => a.name === 'beta-echo'), 'beta’s agents to come back');

    fs.writeFileSync(join(dirs.alpha!, 'late.json'), JSON.stringify(blueprint('late-arrival')));
    fs.rmSync(join(dirs.alpha!, 'broken.json'));
    await waitFor(async () => {
      const c = await agents();
      return c.agents.some((a) => a.name === 'late-arrival') && c.problems.length === 0;
    }, 'the new blueprint to be registered');
  });

  it('a run with a parent session delivers its result as an event on the session’s stream and into the agent’s inbox', async () => {
    const repo = await api.readyRepo();
    const session = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    await api.waitState(session.id, ['RUNNING']);
    const w = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await w.attach();
    const run = await api.ok<RunSummary>('POST', '/api/runs', { agent_name: 'alpha-echo', parameters: { message: 'for the parent' }, parent_session_id: session.id });
    await waitRun(run.id);
    const delivered = await waitFor(async () => {
      const r = await api.ok<RunSummary>('GET', `/api/runs/${run.id}`);
      return r.callback.state === 'delivered' ? r : null;
    }, 'the callback to be delivered');
    expect(delivered.callback.detail).toContain('.agent-village/inbox');
    const event = await waitFor(() => w.events.find((e) => e.type === 'RUN_RESULT'), 'RUN_RESULT in the session stream');
    expect(event.payload).toMatchObject({ run_id: run.id, agent_name: 'alpha-echo', status: 'completed', result_type: 'procedural', exit_code: 0 });
    expect((event.payload!.result_data as { stdin: { message: string } }).stdin.message).toBe('for the parent');
    // What the agent reads: the inbox file named in its environment.
    await w.type(`python3 -c "import json,os; d=json.load(open(os.environ['AGENT_VILLAGE_INBOX']+'/${run.id}.json')); print('inbox-says', d['result_data']['stdin']['message'].upper())"\r`);
    await w.waitText('inbox-says FOR THE PARENT');

    const orphan = await api.request('POST', '/api/runs', { agent_name: 'alpha-echo', parameters: { message: 'x' }, parent_session_id: 'sess_doesnotexist' });
    expect(orphan.status).toBe(404);
    await api.ok('POST', `/api/sessions/${session.id}/stop`);
    w.socket.close();
  });

  it('roles and orgs: viewers cannot start runs; another org sees neither the agents nor the runs', async () => {
    const { token: invite } = await api.ok<{ token: string }>('POST', '/api/invites', { email: 'viewer@example.com', role: 'viewer' });
    const viewer = new Api(stack.url);
    await viewer.ok('POST', '/api/invites/accept', { token: invite, name: 'Vic', password: PASSWORD });
    expect((await viewer.ok<AgentCatalog>('GET', '/api/agents')).agents.length).toBeGreaterThan(0);
    const refused = await viewer.request('POST', '/api/runs', { agent_name: 'alpha-echo', parameters: { message: 'x' } });
    expect(refused.status).toBe(403);
    const someRun = (await viewer.ok<RunSummary[]>('GET', '/api/runs'))[0]!;

    const other = new Api(stack.url);
    await other.ok('POST', '/api/auth/login', { email: 'admin@example.com', password: 'correct horse battery' });
    await other.ok('POST', '/api/orgs', { name: 'Other Org' });
    expect((await other.ok<MeDetails>('GET', '/api/me')).org.name).toBe('Other Org');
    expect(await other.ok<AgentCatalog>('GET', '/api/agents')).toEqual({ agents: [], problems: [] });
    expect(await other.ok<RunSummary[]>('GET', '/api/runs')).toEqual([]);
    expect((await other.request('GET', `/api/runs/${someRun.id}`)).status).toBe(404);
    const res: { status: number; json: Result<unknown> } = await other.request('POST', '/api/runs', { agent_name: 'alpha-echo', parameters: { message: 'x' } });
    expect(res.status).toBe(404);
  });
});

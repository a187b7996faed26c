import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../protocol';
import { Api, ROOT, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/** Grace for a lost runner in this test: short, so expiry is seen without a long wait. */
const GRACE_MS = 4_000;

function startRunner(stack: Stack, token: string, name: string, env: Record<string, string> = {}): ChildProcess {
  return spawn(
    process.execPath,
    ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', name, '--data-dir', join(stack.dataDir, name)],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}

function procState(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^\d+ \(.*\) /, '')[0]!;
}

describe('many runners: placement, pause/resume, loss and return, grace expiry', () => {
  let stack: Stack;
  let api: Api;
  const runners: ChildProcess[] = [];
  let alpha: ChildProcess;
  let beta: ChildProcess;

  beforeAll(async () => {
    stack = await startStack({
      attachedRunner: false,
      env: {
        AGENT_VILLAGE_RUNNER_GRACE_MS: String(GRACE_MS),
        // Lost runners are noticed within ~1.5 s here (10 s + 20 s by default).
        AGENT_VILLAGE_PING_INTERVAL_MS: '500',
        AGENT_VILLAGE_PING_TIMEOUT_MS: '1000',
      },
    });
    api = new Api(stack.url);
    await api.setupAdmin();
    const token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'fleet' })).token;
    alpha = startRunner(stack, token, 'alpha', { AGENT_RUNNER_CAPACITY: '2', AGENT_RUNNER_LABELS: 'fast,eu' });
    beta = startRunner(stack, token, 'beta', { AGENT_RUNNER_CAPACITY: '2' });
    runners.push(alpha, beta);
    await waitFor(async () => (await api.world()).runners.filter((r) => r.online).length === 2, 'two runners online');
  });
  afterAll(async () => {
    for (const r of runners) {
      r.kill('SIGCONT');
      r.kill('SIGKILL');
    }
    await stack?.stop();
  });

  const spawnIn = async (room = '') => {
    const repo = await api.readyRepo();
    return api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: room, provider: 'shell' });
  };
  const runnerName = async (s: SessionSummary) => (await api.world()).runners.find((r) => r.id === s.runner_id)!.name;

  it('places each session on the least-loaded eligible runner and refuses when all are full', async () => {
    const world = await api.world();
    expect(world.runners.find((r) => r.name === 'alpha')?.labels).toEqual(['fast', 'eu']);
    const placed: string[] = [];
    const sessions: SessionSummary[] = [];
    for (let i = 0; i < 4; i++) {
      const s = await spawnIn();
      sessions.push(s);
      placed.push(await runnerName(s));
    }
    // alpha/beta alternate: each new session goes where the load is lowest (ties by name).
    expect(placed).toEqual(['alpha', 'beta', 'alpha', 'beta']);
    const full = await api.request('POST', '/api/sessions', { repo_id: sessions[0]!.repo_id, room_path: '', provider: 'shell' });
    expect(full.status).toBe(503);
    expect(!full.json.ok && full.json.error.message).toMatch(/capacity/);
    const unavailable = await api.request('POST', '/api/sessions', { repo_id: sessions[0]!.repo_id, room_path: '', provider: 'gemini' });
    expect(!unavailable.json.ok && unavailable.json.error.message).toMatch(/gemini provider is not available/);
    for (const s of sessions) await api.ok('POST', `/api/sessions/${s.id}/stop`);
    for (const s of sessions) await api.waitState(s.id, ['COMPLETED']);
  });

  it('pause really stops the process group and resume continues it', async () => {
    const s = await spawnIn('src');
    await api.waitState(s.id, ['RUNNING']);
    const w = new TerminalWatcher(await uiSocket(stack.url, api.cookie), s.id);
    await w.attach();
    const started = await waitFor(() => w.events.find((e) => e.type === 'SESSION_STARTED'), 'SESSION_STARTED');
    const pid = Number(started.payload!.pid);
    await api.ok('POST', `/api/sessions/${s.id}/pause`);
    expect((await api.session(s.id)).state).toBe('PAUSED_BY_HUMAN');
    await waitFor(() => procState(pid) === 'T', 'the shell to be stopped (state T)');
    const again = await api.request('POST', `/api/sessions/${s.id}/pause`);
    expect(again.status).toBe(409);
    await api.ok('POST', `/api/sessions/${s.id}/resume`);
    await api.waitState(s.id, ['RUNNING']);
    await waitFor(() => procState(pid) !== 'T', 'the shell to run again');
    await w.type('echo resumed-$((6*7))\r');
    await w.waitText('resumed-42');
    await api.ok('POST', `/api/sessions/${s.id}/stop`);
    await api.waitState(s.id, ['COMPLETED']);
    w.socket.close();
  });

  it('a runner that stops answering is lost; when it returns its sessions continue with no lost or doubled seq', async () => {
    const s = await spawnIn('docs');
    const name = await runnerName(s);
    const proc = name === 'alpha' ? alpha : beta;
    await api.waitState(s.id, ['RUNNING']);
    const w = new TerminalWatcher(await uiSocket(stack.url, api.cookie), s.id);
    await w.attach();
    await w.type('for i in $(seq 1 40); do echo tick-$i; sleep 0.1; done; echo loop-$((1000+1))\r');
    await w.waitText('tick-3');

    proc.kill('SIGSTOP'); // hung: no heartbeats, no pings, sockets stay open
    await waitFor(async () => (await api.session(s.id)).runner_lost, 'the session to show its runner lost', 20_000);
    expect((await api.world()).runners.find((r) => r.name === name)?.online).toBe(false);
    proc.kill('SIGCONT'); // back within the grace period
    await waitFor(async () => !(await api.session(s.id)).runner_lost, 'the runner to come back');
    await w.waitText('loop-1001', 'the loop to finish after the return', 30_000);
    const after = new TerminalWatcher(await uiSocket(stack.url, api.cookie), s.id);
    await after.attach();
    const seqs = after.events.map((e) => e.seq);
    seqs.forEach((q, i) => expect(q).toBe(i + 1));
    const ticks = [...after.text().matchAll(/tick-(\d+)\r\n/g)].map((m) => Number(m[1]));
    expect(ticks).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect((await api.session(s.id)).state).toBe('RUNNING');
    w.socket.close();
    after.socket.close();
  }, 90_000);

  it('a runner that does not come back within the grace period has its sessions FAILED with the reason', async () => {
    const s = await spawnIn('tests');
    await api.waitState(s.id, ['RUNNING']);
    const owner = s.runner_id!;
    const proc = (await runnerName(s)) === 'alpha' ? alpha : beta;
    proc.kill('SIGKILL');
    await waitFor(async () => (await api.session(s.id)).runner_lost, 'runner lost');
    const failed = await api.waitState(s.id, ['FAILED'], 20_000);
    expect(failed.reason).toMatch(/did not come back within 4 s/);
    expect((await api.world()).runners.find((r) => r.id === owner)?.online).toBe(false);
  }, 60_000);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { io } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RUNNER_SOCKET_PATH, type AuditEventRow, type RunnerSummary, type SessionSummary } from '../../protocol';
import { Api, ROOT, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/** What an anonymous client tries to push before it has shown anything (issue 11 item 8). */
const BIG_EVENT_BYTES = 4 * 1024 * 1024;

interface RunnerProc {
  child: ChildProcess;
  stderr: string[];
}

function startRunner(stack: Stack, token: string, name: string, dir: string): RunnerProc {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', name, '--data-dir', join(stack.dataDir, dir)],
    { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stderr: string[] = [];
  child.stderr!.on('data', (b: Buffer) => stderr.push(b.toString()));
  return { child, stderr };
}

/** The process and its ancestors, from /proc. */
function ancestors(pid: number): number[] {
  const out: number[] = [];
  for (let p = pid; p > 1; ) {
    out.push(p);
    p = Number(readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^\d+ \(.*\) /, '').split(' ')[1]);
  }
  return out;
}

/** How a raw websocket to the runner engine ends: opened, or refused with an HTTP status. */
function rawRunnerSocket(url: string, headers: Record<string, string>): Promise<{ opened: boolean; status: number | null }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}${RUNNER_SOCKET_PATH}/?EIO=4&transport=websocket`, { headers });
    ws.once('open', () => {
      // Had it opened, this is the 4 MB event a server would have to parse.
      ws.send(`42/runner,["runner:events",[{"data":"${'x'.repeat(BIG_EVENT_BYTES)}"}]]`);
      ws.close();
      resolve({ opened: true, status: null });
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ opened: false, status: res.statusCode ?? null });
    });
    ws.once('error', () => resolve({ opened: false, status: null }));
  });
}

describe('runner sockets: handshake authentication and no silent takeover', () => {
  let stack: Stack;
  let api: Api;
  let token: string;
  const procs: RunnerProc[] = [];

  beforeAll(async () => {
    stack = await startStack({ attachedRunner: false });
    api = new Api(stack.url);
    await api.setupAdmin();
    token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'twins' })).token;
  });
  afterAll(async () => {
    for (const p of procs) {
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
    }
    await stack?.stop();
  });

  const alive = async () => expect((await api.request('GET', '/api/me')).status).toBe(200);

  it('an unauthenticated client gets 401 before any websocket exists, so its 4 MB event is never read or parsed', async () => {
    expect(await rawRunnerSocket(stack.url, {})).toEqual({ opened: false, status: 401 });
    expect(await rawRunnerSocket(stack.url, { authorization: 'Bearer avr_wrong' })).toEqual({ opened: false, status: 401 });
    // Long-polling (where a body would be read) is not offered on the runner engine at all.
    const poll = await fetch(`${stack.url}${RUNNER_SOCKET_PATH}/?EIO=4&transport=polling`, { method: 'POST', body: 'x'.repeat(BIG_EVENT_BYTES) });
    expect(poll.status).toBe(400);
    // The browsers' engine does not serve the runner namespace.
    const viaUi = io(`${stack.url}/runner`, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
    await expect(new Promise((res, rej) => (viaUi.once('connect', () => res(null)), viaUi.once('connect_error', rej)))).rejects.toThrow(/Invalid namespace/);
    viaUi.close();
    // A valid header but no (or another) auth.token: the namespace middleware refuses.
    for (const auth of [{}, { token: 'avr_other' }]) {
      const s = io(`${stack.url}/runner`, {
        path: RUNNER_SOCKET_PATH,
        transports: ['websocket'],
        extraHeaders: { authorization: `Bearer ${token}` },
        auth,
        reconnection: false,
        forceNew: true,
      });
      await expect(new Promise((res, rej) => (s.once('connect', () => res(null)), s.once('connect_error', rej)))).rejects.toThrow(/UNAUTHORIZED/);
      s.close();
    }
    // With the token the websocket opens (and the server is still fine after all of the above).
    expect((await rawRunnerSocket(stack.url, { authorization: `Bearer ${token}` })).opened).toBe(true);
    await alive();
    expect((await api.world()).runners).toHaveLength(0);
  });

  it('a second runner process with the same token and name is refused while the first is alive, and fences it once it is silent', async () => {
    const first = startRunner(stack, token, 'twin', 'first');
    procs.push(first);
    await waitFor(async () => (await api.world()).runners.find((r) => r.name === 'twin' && r.online), 'the first runner online');
    const second = startRunner(stack, token, 'twin', 'second');
    procs.push(second);
    await waitFor(() => second.stderr.join('').includes('register refused: CONFLICT'), 'the second runner to be refused', 60_000);

    // Audited, and an alert admins see on the runner.
    expect(await api.ok<AuditEventRow[]>('GET', '/api/audit?action=runner.takeover_refused')).toHaveLength(1);
    let twin = (await api.ok<RunnerSummary[]>('GET', '/api/runners')).find((r) => r.name === 'twin')!;
    expect(twin.security_alert?.message).toMatch(/second connection .* was refused/);

    // The first process still serves the runner: a new session's shell is its descendant.
    const repoDir = join(stack.dataDir, 'repo');
    const { execFileSync } = await import('node:child_process');
    execFileSync('sh', ['-c', `mkdir -p ${repoDir} && cd ${repoDir} && git init -q -b main && echo x > a && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm i`]);
    const repo = await api.ok<{ id: string }>('POST', '/api/repos', { source: repoDir, name: 'twins' });
    await waitFor(async () => (await api.world()).repos.find((r) => r.id === repo.id && r.status === 'ready'), 'the repository scanned', 60_000);
    const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    const w = new TerminalWatcher(await uiSocket(stack.url, api.cookie), s.id);
    await w.attach();
    const started = await waitFor(() => w.events.find((e) => e.type === 'SESSION_STARTED'), 'SESSION_STARTED');
    expect(ancestors(Number(started.payload!.pid))).toContain(first.child.pid);
    await api.ok('POST', `/api/sessions/${s.id}/stop`);
    await api.waitState(s.id, ['COMPLETED', 'FAILED']);
    w.socket.close();

    // The first one goes silent (stopped, socket still open): once its heartbeat is stale the
    // second one fences it and takes over, audited as such.
    first.child.kill('SIGSTOP');
    await waitFor(async () => (await api.ok<AuditEventRow[]>('GET', '/api/audit?action=runner.fenced')).length === 1, 'the fence', 90_000);
    await waitFor(() => /registered as runner_/.test(second.stderr.join('')), 'the second runner registered');
    twin = (await api.ok<RunnerSummary[]>('GET', '/api/runners')).find((r) => r.name === 'twin')!;
    expect(twin.online).toBe(true);
    expect(twin.security_alert?.message).toMatch(/old connection was dropped/);

    // An admin dismisses the alert; that is audited too.
    await api.ok('DELETE', `/api/runners/${twin.id}/alert`);
    expect((await api.ok<RunnerSummary[]>('GET', '/api/runners')).find((r) => r.name === 'twin')!.security_alert).toBeNull();
    expect(await api.ok<AuditEventRow[]>('GET', '/api/audit?action=runner.alert_dismissed')).toHaveLength(1);
    expect((await api.request('DELETE', '/api/runners/runner_nothere1/alert')).status).toBe(404);
    await alive();
  });
});

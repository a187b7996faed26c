import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Server, type Socket as ServerSocket } from 'socket.io';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FLOW_CONTROL,
  RUNNER_SOCKET_PATH,
  RunnerEventBatchSchema,
  RunnerFrameEventsSchema,
  RunnerRegisterSchema,
  fail,
  ok,
  type RepoTree,
  type Result,
  type RunnerEvent,
  type RunnerRegister,
  type RunnerToServerEvents,
  type ServerToRunnerEvents,
} from '../protocol';
import { startRunner, type RunnerHandle } from './main';
import { isProcessAlive } from './pty/process-tree';
import { captureLogger, createCommand, makeSampleRepo, makeTempDir, outputOf, removeTempDir, waitFor } from './testing/fixtures';

const TOKEN = 'rt_test_token';
const REPO_ROOT = path.resolve(import.meta.dirname, '..');
/**
 * Only a bound for a hang: the CLI test waits on four processes' exits, and each start-up (the
 * runner loaded through tsx) took 5+ s with the machine's two cores shared by several test runs.
 */
const CLI_TEST_TIMEOUT_MS = 120_000;

/** The runner as the control plane starts it: a child process running runner/index.ts. */
/** Runner children still running: a test that fails half-way must not leave one dialling forever. */
const liveChildren = new Set<ReturnType<typeof spawn>>();

function spawnCli(args: string[]) {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, AGENT_RUNNER_SERVER: '', AGENT_RUNNER_TOKEN: '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  liveChildren.add(proc);
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => (liveChildren.delete(proc), resolve(code))));
  return { proc, exited, stderr: () => err };
}

/** A fake control plane: stores events like the real one (UNIQUE(session_id, seq)) and acks. */
class FakeControlPlane {
  readonly http: HttpServer = createServer();
  // The runner dials the runner engine's path; the fake also refuses a wrong bearer in the HTTP handshake, like the real one.
  readonly io = new Server<RunnerToServerEvents, ServerToRunnerEvents>(this.http, {
    path: RUNNER_SOCKET_PATH,
    allowRequest: (req, cb) => {
      if (req.headers.authorization === `Bearer ${TOKEN}`) return cb(null, true);
      req.socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      cb('bad token', false);
    },
  });
  registers: RunnerRegister[] = [];
  heartbeats = 0;
  /** Stored events per session, deduplicated by seq. */
  stored = new Map<string, Map<number, RunnerEvent>>();
  /** Every event in arrival order (with resends). */
  received: RunnerEvent[] = [];
  socket: ServerSocket<RunnerToServerEvents, ServerToRunnerEvents> | null = null;
  registerAnswer: () => Result<unknown> = () => ok({ runner_id: 'runner_1', org_id: 'org_test', heartbeat_ms: 100 });
  /** When false, batches are received but never acked (a server that died mid-way). */
  ackEvents = true;
  /** Batches by how they came: JSON (`runner:events`) or binary frames (`runner:frame`). */
  via = { events: 0, frame: 0 };

  async listen(port = 0): Promise<string> {
    this.io.of('/runner').on('connection', (socket) => {
      if (socket.handshake.auth?.token !== TOKEN) return void socket.disconnect(true);
      this.socket = socket;
      socket.on('runner:register', (body, ack) => {
        this.registers.push(body);
        ack(this.registerAnswer() as Result<never>);
      });
      socket.on('runner:heartbeat', (_body, ack) => {
        this.heartbeats++;
        ack(ok({ ts: Date.now() }));
      });
      socket.on('runner:events', (batch, ack) => {
        this.via.events++;
        this.store(RunnerEventBatchSchema.safeParse(batch), ack);
      });
      socket.on('runner:frame', (frame, ack) => {
        this.via.frame++;
        this.store(RunnerFrameEventsSchema.safeParse(frame), ack);
      });
    });
    await new Promise<void>((r) => this.http.listen(port, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  private store(parsed: { success: true; data: RunnerEvent[] } | { success: false }, ack: (r: Result<never>) => void): void {
    if (!parsed.success) return ack(fail('BAD_REQUEST', 'bad batch'));
    const highest = new Map<string, number>();
    for (const e of parsed.data) {
      this.received.push(e);
      const m = this.stored.get(e.session_id) ?? new Map<number, RunnerEvent>();
      if (!m.has(e.seq)) m.set(e.seq, e);
      this.stored.set(e.session_id, m);
      highest.set(e.session_id, Math.max(highest.get(e.session_id) ?? 0, e.seq));
    }
    if (this.ackEvents) ack(ok({ acked: [...highest].map(([session_id, seq]) => ({ session_id, seq })) }) as Result<never>);
  }

  events(sid: string): RunnerEvent[] {
    return [...(this.stored.get(sid)?.values() ?? [])].sort((a, b) => a.seq - b.seq);
  }

  command<K extends 'session:create' | 'session:input' | 'session:stop' | 'session:pause' | 'session:resume' | 'session:approve' | 'repo:scan'>(
    name: K,
    body: unknown,
  ): Promise<Result<unknown>> {
    const s = this.socket!;
    return (s.timeout(10_000) as unknown as { emitWithAck(n: string, b: unknown): Promise<Result<unknown>> }).emitWithAck(name, body);
  }

  async close(): Promise<void> {
    this.io.close();
    await new Promise((r) => this.http.close(r));
  }
}

/**
 * A runner child process (tsx) starting and registering: ~2 s on a quiet machine, past 15 s at load
 * 25 beside the rest of the suite. The tests that start one get this long, and their own timeout.
 */
const CHILD_START_MS = 45_000;
const CHILD_TEST_TIMEOUT_MS = 90_000;

describe('runner over a real socket', () => {
  let tmp: string;
  let source: string;
  let cp: FakeControlPlane;
  let url: string;
  let runner: RunnerHandle | null = null;
  const log = captureLogger();

  const start = (overrides: { token?: string; onUnauthorized?: (m: string) => void; labels?: string[]; repo_access?: string[] } = {}) =>
    startRunner(
      {
        server: url,
        token: overrides.token ?? TOKEN,
        name: 'test-runner',
        data_dir: path.join(tmp, 'data'),
        capacity: 2,
        labels: overrides.labels,
        repo_access: overrides.repo_access,
      },
      { log, onUnauthorized: overrides.onUnauthorized },
    );

  beforeEach(async () => {
    tmp = await makeTempDir('conn');
    source = makeSampleRepo(path.join(tmp, 'source'));
    cp = new FakeControlPlane();
    url = await cp.listen();
  });
  afterEach(async () => {
    for (const child of liveChildren) child.kill('SIGKILL');
    await runner?.stop();
    runner = null;
    await cp.close();
    await removeTempDir(tmp);
  });

  /** The control plane goes away and a new one listens on the same port; resolves once the runner registered with it. */
  async function restartControlPlane() {
    const port = Number(new URL(url).port);
    await cp.close();
    await waitFor(() => !runner!.connection.connected, 'disconnect noticed');
    cp = new FakeControlPlane();
    await cp.listen(port);
    await waitFor(() => cp.registers.length === 1, 'register with the new server');
  }

  it('registers, validates commands, runs a session end to end and stops it', async () => {
    runner = await start();
    await waitFor(() => cp.registers.length === 1, 'register');
    const reg = RunnerRegisterSchema.parse(cp.registers[0]);
    expect(reg).toMatchObject({ name: 'test-runner', capacity: 2, providers: ['shell'], sessions: [] });
    expect(reg.instance_id).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(() => cp.heartbeats > 0, 'heartbeat');

    // Malformed: answered BAD_REQUEST, nothing created.
    const bad = await cp.command('session:create', { session_id: 'not-a-session', org_id: 42 });
    expect(bad).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await cp.command('session:create', null)).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await cp.command('session:input', { session_id: 'sess_whatever1', data: 7 })).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(runner.sessions.activeCount()).toBe(0);
    expect(fs.readdirSync(path.join(tmp, 'data', 'worktrees'))).toEqual([]);
    expect(cp.received).toEqual([]);

    const cmd = createCommand({ repo_source: source });
    const sid = cmd.session_id;
    expect(await cp.command('session:create', cmd)).toEqual({ ok: true, data: { session_id: sid } });
    await waitFor(() => cp.events(sid).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'RUNNING'), 'RUNNING');
    expect(await cp.command('session:input', { session_id: sid, data: 'echo hi', mode: 'line' })).toEqual({ ok: true, data: null });
    // The echoed command line also holds "hi"; the printed line stands alone (after bash's \r).
    await waitFor(() => /\rhi\r\n/.test(outputOf(cp.events(sid), sid)), 'hi in the output');

    const started = cp.events(sid).find((e) => e.type === 'SESSION_STARTED');
    const worktree = started?.type === 'SESSION_STARTED' ? started.worktree_path : '';
    expect(fs.existsSync(worktree)).toBe(true);
    expect(await cp.command('session:stop', { session_id: sid })).toEqual({ ok: true, data: null });
    await waitFor(() => cp.events(sid).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'COMPLETED'), 'COMPLETED');
    expect(fs.existsSync(worktree)).toBe(false);

    // Arrival order is seq order, from 1, without holes or repeats.
    const arrived = cp.received.filter((e) => e.session_id === sid).map((e) => e.seq);
    expect(arrived).toEqual(arrived.map((_, i) => i + 1));
    expect(cp.events(sid).every((e) => e.org_id === 'org_test' && e.repo_id === 'repo_sample01' && e.repo_ref.name === 'sample')).toBe(true);
    // Everything acked: the spool of the ended session is gone.
    await waitFor(() => fs.readdirSync(path.join(tmp, 'data', 'spool')).length === 0, 'spool emptied');
  });

  it('sends binary frames to a control plane that announces them and JSON to one that does not, output byte-identical', async () => {
    // 3000 × é€😀 (2-, 3- and 4-byte characters) leave the PTY in reads that split them anywhere.
    const emoji = 'é€😀'.repeat(3000);
    const print = (mark: string) =>
      `printf '${mark}<'; for i in $(seq 3000); do printf '\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9f\\x98\\x80'; done; printf '>\\n'`;
    // Only the printed line matches: the echoed command line has a quote after the mark.
    const printed = (mark: string) => new RegExp(`${mark}<([é€😀]*)>`, 'u');
    cp.registerAnswer = () => ok({ runner_id: 'runner_1', org_id: 'org_test', heartbeat_ms: 100, frames: 1 });
    runner = await start();
    await waitFor(() => cp.registers.length === 1, 'register');
    const cmd = createCommand({ repo_source: source });
    const sid = cmd.session_id;
    await cp.command('session:create', cmd);
    await waitFor(() => /[#$] /.test(outputOf(cp.events(sid), sid)), 'prompt');
    await cp.command('session:input', { session_id: sid, data: print('F'), mode: 'line' });
    const viaFrames = await waitFor(() => printed('F').exec(outputOf(cp.events(sid), sid)), 'output through frames', 30_000);
    expect(viaFrames[1] === emoji).toBe(true);
    expect(cp.via).toMatchObject({ events: 0, frame: expect.any(Number) });
    expect(cp.via.frame).toBeGreaterThan(0);

    // An older control plane (no `frames` in its register answer): the same runner falls back to JSON.
    await restartControlPlane();
    await cp.command('session:input', { session_id: sid, data: print('J'), mode: 'line' });
    const viaJson = await waitFor(() => printed('J').exec(outputOf(cp.events(sid), sid)), 'output through JSON', 30_000);
    expect(viaJson[1] === emoji).toBe(true);
    expect(cp.via).toMatchObject({ events: expect.any(Number), frame: 0 });
    expect(cp.via.events).toBeGreaterThan(0);
  });

  it('answers repo:scan with the tree, and a clear error for a bad source', async () => {
    runner = await start();
    await waitFor(() => cp.registers.length === 1, 'register');
    const res = (await cp.command('repo:scan', { repo_id: 'repo_sample01', source })) as Result<RepoTree>;
    expect(res.ok && res.data.dirs.map((d) => d.path)).toEqual(['', 'docs', 'src', 'src/lib', 'src/lib/deep']);
    const bad = await cp.command('repo:scan', { repo_id: 'repo_missing01', source: path.join(tmp, 'nope') });
    expect(bad).toMatchObject({ ok: false, error: { code: 'RUNNER_ERROR', message: expect.stringMatching(/^git clone failed: /) } });
  });

  it('registers labels and repo access; refuses sources outside it; pause/resume/approve are validated', async () => {
    runner = await start({ labels: ['gpu', 'eu-west'], repo_access: [path.join(tmp, 'source')] });
    await waitFor(() => cp.registers.length === 1, 'register');
    expect(cp.registers[0]).toMatchObject({ labels: ['gpu', 'eu-west'], repo_access: [path.join(tmp, 'source')] });
    const denied = { ok: false, error: { code: 'FORBIDDEN', message: 'this runner cannot reach that repository' } };
    expect(await cp.command('repo:scan', { repo_id: 'repo_other001', source: path.join(tmp, 'other') })).toEqual(denied);
    expect(await cp.command('session:create', createCommand({ repo_source: '/etc' }))).toEqual(denied);
    expect(runner.sessions.activeCount()).toBe(0);
    expect((await cp.command('repo:scan', { repo_id: 'repo_sample01', source })).ok).toBe(true);

    expect(await cp.command('session:pause', { session_id: 'sess_missing01' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await cp.command('session:resume', { nope: 1 })).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await cp.command('session:approve', { session_id: 'sess_missing01', approval_id: '', decision: 'allow' })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
    const cmd = createCommand({ repo_source: source });
    await cp.command('session:create', cmd);
    await waitFor(() => cp.events(cmd.session_id).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'RUNNING'), 'RUNNING');
    expect(await cp.command('session:pause', { session_id: cmd.session_id })).toEqual({ ok: true, data: null });
    expect(await cp.command('session:approve', { session_id: cmd.session_id, approval_id: 'appr_1', command_hash: 'h', decision: 'deny', decided_by: 'ann' })).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'no pending approval appr_1 (already decided, expired, or never asked)' },
    });
    expect(await cp.command('session:resume', { session_id: cmd.session_id })).toEqual({ ok: true, data: null });
    await waitFor(
      () => cp.events(cmd.session_id).filter((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'RUNNING').length === 2,
      'RUNNING again',
    );
  });

  it('resends unacked events after a reconnect, in order, and the server ends with no hole', async () => {
    runner = await start();
    await waitFor(() => cp.registers.length === 1, 'register');
    const cmd = createCommand({ repo_source: source });
    const sid = cmd.session_id;
    await cp.command('session:create', cmd);
    await waitFor(() => cp.events(sid).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'RUNNING'), 'RUNNING');
    // Quiet first: the prompt is out and everything sent so far is acknowledged (no ack in flight).
    await waitFor(() => /[#$] /.test(outputOf(cp.received, sid)), 'prompt');
    await waitFor(() => runner!.spool.ackedSeq(sid) === runner!.spool.lastSeq(sid), 'acked so far');
    const ackedBefore = runner.spool.ackedSeq(sid);

    cp.ackEvents = false;
    await cp.command('session:input', { session_id: sid, data: 'echo "AFTER""DROP"', mode: 'line' });
    await waitFor(() => outputOf(cp.received, sid).includes('AFTERDROP'), 'unacked output arrived');
    expect(runner.spool.ackedSeq(sid)).toBe(ackedBefore);

    // The transport dies; the runner reconnects, registers again naming its live session, resends.
    cp.ackEvents = true;
    const resendFrom = cp.received.length;
    cp.socket!.conn.close();
    await waitFor(() => cp.registers.length === 2, 'second register');
    expect(cp.registers[1].sessions).toEqual([{ session_id: sid, alive: true }]);
    await waitFor(() => runner!.spool.ackedSeq(sid) === runner!.spool.lastSeq(sid), 'everything acked');
    const resent = cp.received.slice(resendFrom).filter((e) => e.session_id === sid).map((e) => e.seq);
    expect(resent[0]).toBe(ackedBefore + 1);
    expect(resent).toEqual(resent.map((_, i) => ackedBefore + 1 + i));
    const all = cp.events(sid).map((e) => e.seq);
    expect(all).toEqual(all.map((_, i) => i + 1));
  });

  it('a runner killed with SIGKILL: on restart the session gets OUTPUT_GAP and FAILED, its worktree goes', async () => {
    const child = spawnCli(['--server', url, '--token', TOKEN, '--data-dir', path.join(tmp, 'data'), '--name', 'doomed']);
    await waitFor(() => cp.registers.length === 1, 'register of the child', CHILD_START_MS);
    const cmd = createCommand({ repo_source: source });
    const sid = cmd.session_id;
    await cp.command('session:create', cmd);
    await waitFor(() => cp.events(sid).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'RUNNING'), 'RUNNING');
    await cp.command('session:input', { session_id: sid, data: 'echo "BEFORE""CRASH"', mode: 'line' });
    await waitFor(() => outputOf(cp.events(sid), sid).includes('BEFORECRASH'), 'output before the crash');
    const pid = cp.events(sid).find((e) => e.type === 'SESSION_STARTED');
    child.proc.kill('SIGKILL');
    await child.exited;
    const lastSeq = Math.max(...cp.events(sid).map((e) => e.seq));
    expect(fs.existsSync(path.join(tmp, 'data', 'worktrees', sid))).toBe(true);

    runner = await start();
    await waitFor(() => cp.events(sid).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'FAILED'), 'FAILED after restart');
    const evs = cp.events(sid);
    expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
    expect(evs.at(-2)).toMatchObject({ type: 'OUTPUT_GAP', seq: lastSeq + 1, reason: expect.stringContaining(`after seq ${lastSeq}`) });
    expect(evs.at(-1)).toMatchObject({ seq: lastSeq + 2, from: 'RUNNING', to: 'FAILED', reason: 'runner restarted while the session was running' });
    expect(cp.registers.at(-1)!.sessions).toEqual([{ session_id: sid, alive: false }]);
    expect(fs.existsSync(path.join(tmp, 'data', 'worktrees', sid))).toBe(false);
    await waitFor(() => pid?.type === 'SESSION_STARTED' && !isProcessAlive(pid.pid), 'the orphaned shell gone');
  }, CHILD_TEST_TIMEOUT_MS);

  it('CLI: SIGTERM stops the sessions, delivers their end and exits 0', async () => {
    const child = spawnCli(['--server', url, '--token', TOKEN, '--data-dir', path.join(tmp, 'data')]);
    await waitFor(() => cp.registers.length === 1, 'register of the child', CHILD_START_MS);
    const cmd = createCommand({ repo_source: source });
    await cp.command('session:create', cmd);
    await waitFor(() => cp.events(cmd.session_id).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'RUNNING'), 'RUNNING');
    child.proc.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    expect(cp.events(cmd.session_id).at(-1)).toMatchObject({ type: 'SESSION_STATE_CHANGED', to: 'COMPLETED' });
    expect(fs.readdirSync(path.join(tmp, 'data', 'worktrees'))).toEqual([]);
    expect(child.stderr()).toMatch(/^\[runner\] /m);
  }, CHILD_TEST_TIMEOUT_MS);

  it('CLI: --listen serves the commands over HTTP with the runner token', async () => {
    const child = spawnCli(['--server', url, '--token', TOKEN, '--data-dir', path.join(tmp, 'data'), '--listen', '0', '--labels', 'a,b']);
    try {
      const m = await waitFor(() => /serving the runner commands on (http:\/\/127\.0\.0\.1:\d+\/runner\/v1)/.exec(child.stderr()), 'listening', 15_000);
      await waitFor(() => cp.registers.length === 1, 'register of the child', CHILD_START_MS);
      expect(cp.registers[0].labels).toEqual(['a', 'b']);
      const stop = (token: string) =>
        fetch(`${m[1]}/sessions/sess_missing01/stop`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({
          status: r.status,
          json: await r.json(),
        }));
      expect(await stop('wrong')).toMatchObject({ status: 401, json: { ok: false, error: { code: 'UNAUTHORIZED' } } });
      expect(await stop(TOKEN)).toMatchObject({ status: 404, json: { ok: false, error: { code: 'NOT_FOUND' } } });
    } finally {
      child.proc.kill('SIGTERM');
      await child.exited;
    }
  }, CHILD_TEST_TIMEOUT_MS);

  it('CLI: exits 2 on bad configuration and 3 when the token is refused', async () => {
    // Four CLI start-ups (each loads the runner through tsx: seconds on a loaded machine) run side
    // by side, each waited on by its exit, instead of one after another against the test's clock.
    cp.registerAnswer = () => fail('UNAUTHORIZED', 'unknown runner token');
    const bad = spawnCli(['--server', 'not a url', '--token', TOKEN, '--data-dir', path.join(tmp, 'data-bad')]);
    const badCapacity = spawnCli(['--server', url, '--token', TOKEN, '--capacity', 'lots']);
    const refused = spawnCli(['--server', url, '--token', TOKEN, '--data-dir', path.join(tmp, 'data-refused')]);
    // Refused in the HTTP handshake (401 before any websocket): the same exit, a clear message.
    const wrongToken = spawnCli(['--server', url, '--token', 'avr_not_it', '--data-dir', path.join(tmp, 'data-wrong')]);
    const [badExit, badCapacityExit, refusedExit, wrongTokenExit] = await Promise.all([bad.exited, badCapacity.exited, refused.exited, wrongToken.exited]);
    expect(badExit).toBe(2);
    expect(bad.stderr()).toContain('server: must be a URL');
    expect(badCapacityExit).toBe(2);
    expect(badCapacity.stderr()).toContain('capacity');
    expect(refusedExit).toBe(3);
    expect(refused.stderr()).toContain('UNAUTHORIZED');
    expect(wrongTokenExit).toBe(3);
    expect(wrongToken.stderr()).toContain('the handshake was refused (HTTP 401');
  }, CLI_TEST_TIMEOUT_MS);

  it('finds a restarted control plane by itself and registers again', async () => {
    runner = await start();
    await waitFor(() => cp.registers.length === 1, 'register');
    await restartControlPlane();
    expect(runner.connection.registered).toMatchObject({ runner_id: 'runner_1' });
  });

  it('a PTY paused for acks runs on after a reconnect: acks sent while the socket was down are lost', async () => {
    runner = await start();
    await waitFor(() => cp.registers.length === 1, 'register');
    const cmd = createCommand({ repo_source: source });
    const sid = cmd.session_id;
    expect(await cp.command('session:create', cmd)).toEqual({ ok: true, data: { session_id: sid } });
    await waitFor(() => cp.events(sid).some((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'RUNNING'), 'RUNNING');
    // No viewer acks here: past the high watermark the runner pauses the PTY.
    expect(await cp.command('session:input', { session_id: sid, data: 'yes', mode: 'line' })).toEqual({ ok: true, data: null });
    const flow = runner.sessions.get(sid)!.flow;
    await waitFor(() => flow.paused, 'the PTY paused for want of acks');
    const pausedAt = runner.spool.lastSeq(sid);
    // The control plane goes away; whatever ack it had on its way is lost with the socket.
    await restartControlPlane();
    // Nobody will ever send the lost acks again: the PTY must not wait for them. A paused PTY adds
    // at most what the kernel and the batcher still held (well under half a window); counted in
    // characters, as flow control counts, since a chunk may be up to 120 KB under load.
    const after = () => cp.events(sid).reduce((n, e) => (e.type === 'TERMINAL_CHUNK' && e.seq > pausedAt ? n + e.data.length : n), 0);
    await waitFor(() => after() > FLOW_CONTROL.HIGH_WATERMARK_CHARS * 0.6, 'output after the reconnect', 30_000);
    expect(flow.resumeCount).toBeGreaterThan(0);
    // The new server got everything unacked and what followed, in order, without holes.
    const seqs = cp.events(sid).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
  });

  it('gives up with onUnauthorized when register says UNAUTHORIZED', async () => {
    cp.registerAnswer = () => fail('UNAUTHORIZED', 'token revoked');
    let refused = '';
    runner = await start({ onUnauthorized: (m) => (refused = m) });
    await waitFor(() => refused, 'onUnauthorized');
    expect(refused).toBe('token revoked');
    expect(log.lines.some((l) => l.includes('UNAUTHORIZED'))).toBe(true);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FLOW_CONTROL, type RunnerEvent } from '../../protocol';
import { isProcessAlive } from '../pty/process-tree';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { makeSessionHarness, type SessionHarness } from '../testing/session-harness';

/** The live descendants of `root` with their command name and state letter, from /proc. */
function descendantsOf(root: number): Array<{ pid: number; comm: string; state: string }> {
  const all: Array<{ pid: number; ppid: number; comm: string; state: string }> = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone in between
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so cut at the last ')'.
    const close = stat.lastIndexOf(')');
    const [state, ppid] = stat.slice(close + 2).split(' ');
    all.push({ pid: Number(name), ppid: Number(ppid), comm: stat.slice(stat.indexOf('(') + 1, close), state: state! });
  }
  const out: Array<{ pid: number; comm: string; state: string }> = [];
  const parents = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        out.push({ pid: p.pid, comm: p.comm, state: p.state });
        grew = true;
      }
    }
  }
  return out;
}

/** Short grace so the SIGKILL escalation test does not wait the production 3 s. */
const TEST_STOP_GRACE_MS = 300;

/** Real spool, git, PTYs; the "server" stores and acks every batch at once (the shared harness). */
const makeHarness = (capacity = 4): Promise<SessionHarness> =>
  makeSessionHarness('sessions', { deps: () => ({ capacity, stopGraceMs: TEST_STOP_GRACE_MS }) });

const states = (events: RunnerEvent[], sid: string) =>
  events.filter((e) => e.session_id === sid && e.type === 'SESSION_STATE_CHANGED').map((e) => (e.type === 'SESSION_STATE_CHANGED' ? e.to : ''));

const finalState = (events: RunnerEvent[], sid: string) => {
  const last = events.filter((e) => e.session_id === sid && e.type === 'SESSION_STATE_CHANGED').at(-1);
  return last?.type === 'SESSION_STATE_CHANGED' && (last.to === 'COMPLETED' || last.to === 'FAILED') ? last : undefined;
};

describe('SessionManager with real PTYs', () => {
  let h: SessionHarness;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(() => h.close());

  it('runs the shell in a clean environment and walks the states to COMPLETED', async () => {
    process.env.AGENT_RUNNER_TEST_MARKER = 'leaked-from-parent';
    process.env.AGENT_RUNNER_TOKEN = 'secret-token-should-not-leak';
    const cmd = createCommand({ repo_source: h.source, room_path: 'src' });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd)).toEqual({ ok: true, data: { session_id: sid } });
    await waitFor(() => states(h.events, sid).includes('RUNNING'), 'RUNNING');
    expect(h.manager.resize({ session_id: sid, cols: 91, rows: 17 }).ok).toBe(true);
    // Quotes split the markers so the echoed command line never matches them.
    expect(h.manager.input({ session_id: sid, data: `stty size; printf '%s\\n' "==""BEGIN"; env; printf '%s\\n' "==""END"`, mode: 'line' }).ok).toBe(true);
    const out = await waitFor(() => {
      const o = outputOf(h.events, sid);
      return o.includes('==END') && o;
    }, 'env output');
    expect(out).toContain('17 91\r\n');
    const envText = out.slice(out.indexOf('==BEGIN') + '==BEGIN'.length, out.indexOf('==END'));
    const vars = new Map(
      envText
        .split(/\r?\n/)
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as [string, string]),
    );
    const started = h.events.find((e) => e.session_id === sid && e.type === 'SESSION_STARTED');
    expect(started?.type === 'SESSION_STARTED' && started.branch).toBe(`agent/${sid}`);
    const worktree = started?.type === 'SESSION_STARTED' ? started.worktree_path : '';

    expect(vars.get('AGENT_VILLAGE_SESSION_ID')).toBe(sid);
    expect(vars.get('HOME')).toBe(path.join(h.dataDir, 'homes', sid));
    expect(vars.get('PWD')).toBe(path.join(worktree, 'src'));
    expect(vars.get('TERM')).toBe('xterm-256color');
    expect(vars.get('PATH')?.split(':')).toContain(path.dirname(process.execPath));
    expect(out).not.toContain('AGENT_RUNNER_TEST_MARKER');
    expect(out).not.toContain('secret-token-should-not-leak');
    // Only what the runner sets, plus what bash itself maintains.
    const allowed = new Set(['PATH', 'HOME', 'TERM', 'COLORTERM', 'LANG', 'USER', 'LOGNAME', 'SHELL', 'AGENT_VILLAGE_SESSION_ID', 'AGENT_VILLAGE_INBOX', 'PWD', 'OLDPWD', 'SHLVL', '_']);
    expect([...vars.keys()].filter((k) => !allowed.has(k))).toEqual([]);

    expect(h.manager.stop({ session_id: sid }).ok).toBe(true);
    const final = await waitFor(() => finalState(h.events, sid), 'final state');
    expect(states(h.events, sid)).toEqual(['PREPARING_WORKSPACE', 'STARTING_PROVIDER', 'RUNNING', 'STOPPING', 'COMPLETED']);
    expect(final.reason).toMatch(/stopped by request/);
    expect(fs.existsSync(worktree)).toBe(false);
    expect(fs.existsSync(path.join(h.dataDir, 'homes', sid))).toBe(false);
    const seqs = h.events.filter((e) => e.session_id === sid).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    delete process.env.AGENT_RUNNER_TEST_MARKER;
    delete process.env.AGENT_RUNNER_TOKEN;
  });

  it('maps exit codes: 0 → COMPLETED, non-zero → FAILED; a missing room falls back to the worktree root', async () => {
    const good = createCommand({ repo_source: h.source, room_path: 'no/such/room' });
    const bad = createCommand({ repo_source: h.source });
    h.manager.create(good);
    h.manager.create(bad);
    await waitFor(() => states(h.events, good.session_id).includes('RUNNING') && states(h.events, bad.session_id).includes('RUNNING'), 'RUNNING');
    h.manager.input({ session_id: good.session_id, data: 'echo "WHERE=$(pwd)"; exit 0', mode: 'line' });
    h.manager.input({ session_id: bad.session_id, data: 'exit 3', mode: 'line' });
    const g = await waitFor(() => finalState(h.events, good.session_id), 'good exit');
    const b = await waitFor(() => finalState(h.events, bad.session_id), 'bad exit');
    expect(g).toMatchObject({ to: 'COMPLETED', exit_code: 0, reason: 'exited with code 0' });
    expect(b).toMatchObject({ to: 'FAILED', exit_code: 3, reason: 'exited with code 3' });
    const started = h.events.find((e) => e.session_id === good.session_id && e.type === 'SESSION_STARTED');
    expect(outputOf(h.events, good.session_id)).toContain(`WHERE=${started?.type === 'SESSION_STARTED' ? started.worktree_path : '?'}\r\n`);
    // A final usage tick bills the partial window.
    const tick = h.events.find((e) => e.session_id === good.session_id && e.type === 'USAGE_TICK');
    expect(tick).toMatchObject({ provider: 'shell', units: { files_touched: 0 } });
    expect(tick?.type === 'USAGE_TICK' && tick.window_start % 30_000).toBe(0);
  });

  it('pauses the PTY above the high watermark without acks and resumes after acks', async () => {
    const cmd = createCommand({ repo_source: h.source });
    const sid = cmd.session_id;
    h.manager.create(cmd);
    await waitFor(() => states(h.events, sid).includes('RUNNING'), 'RUNNING');
    const session = h.manager.get(sid)!;
    h.manager.input({ session_id: sid, data: 'yes', mode: 'line' });
    await waitFor(() => session.flow.paused, 'pause');
    expect(session.flow.pauseCount).toBe(1);
    expect(session.flow.backlog).toBeGreaterThan(FLOW_CONTROL.HIGH_WATERMARK_CHARS);
    // Paused means bounded: `yes` would produce hundreds of MB if reading went on. Once nobody
    // reads, the terminal's buffer fills and `yes` sleeps in write(): wait for that, not a clock.
    await waitFor(() => descendantsOf(session.pid!).some((p) => p.comm === 'yes' && p.state === 'S'), '`yes` blocked on the full terminal');
    const sentWhilePaused = session.flow.sentChars;
    expect(sentWhilePaused).toBeLessThan(FLOW_CONTROL.HIGH_WATERMARK_CHARS + 1_000_000);
    expect(session.flow.paused).toBe(true);

    // A viewer parsed everything so far: backlog drops below the low watermark → resume.
    const lastChunk = h.events.filter((e) => e.session_id === sid && e.type === 'TERMINAL_CHUNK').at(-1)!;
    h.manager.terminalAck({ session_id: sid, seq: h.spool.lastSeq(sid) });
    expect(lastChunk.seq).toBeLessThanOrEqual(h.spool.lastSeq(sid));
    expect(session.flow.resumeCount).toBe(1);
    await waitFor(() => session.flow.sentChars > sentWhilePaused, 'output after resume');
    // Still nobody acks: it must pause again.
    await waitFor(() => session.flow.pauseCount === 2, 'second pause');

    h.manager.input({ session_id: sid, data: '\x03', mode: 'raw' });
    h.manager.stop({ session_id: sid });
    await waitFor(() => finalState(h.events, sid), 'final state');
  });

  it('stop kills every process of the session, also jobs in their own process group', async () => {
    const cmd = createCommand({ repo_source: h.source });
    const sid = cmd.session_id;
    h.manager.create(cmd);
    await waitFor(() => states(h.events, sid).includes('RUNNING'), 'RUNNING');
    const shellPid = h.manager.get(sid)!.pid!;
    // nohup: survives the shell's own SIGHUP to its jobs, so only the runner's kill can end it.
    h.manager.input({ session_id: sid, data: 'nohup sleep 1000 >/dev/null 2>&1 & echo "BGPID=$!"', mode: 'line' });
    const m = await waitFor(() => /BGPID=(\d+)/.exec(outputOf(h.events, sid)), 'background pid');
    const bgPid = Number(m[1]);
    expect(isProcessAlive(bgPid)).toBe(true);
    h.manager.stop({ session_id: sid });
    const final = await waitFor(() => finalState(h.events, sid), 'final state');
    expect(final.to).toBe('COMPLETED');
    expect(isProcessAlive(shellPid)).toBe(false);
    await waitFor(() => !isProcessAlive(bgPid), 'background job gone', 2_000);
  });

  it('escalates to SIGKILL after the grace period when the program ignores SIGTERM and SIGHUP', async () => {
    const cmd = createCommand({ repo_source: h.source });
    const sid = cmd.session_id;
    h.manager.create(cmd);
    await waitFor(() => states(h.events, sid).includes('RUNNING'), 'RUNNING');
    h.manager.input({ session_id: sid, data: `trap '' TERM HUP; echo "TRAP""SET"; while :; do sleep 0.05; done`, mode: 'line' });
    await waitFor(() => outputOf(h.events, sid).includes('TRAPSET'), 'trap set');
    h.manager.stop({ session_id: sid });
    const final = await waitFor(() => finalState(h.events, sid), 'final state');
    expect(final).toMatchObject({ to: 'COMPLETED', reason: expect.stringContaining('SIGKILL'), exit_code: null });
  });

  it('refuses duplicates, over-capacity, unknown sessions; a bad checkout ends FAILED with the reason', async () => {
    const small = await makeHarness(1);
    try {
      const cmd = createCommand({ repo_source: small.source, checkout: { type: 'branch', ref: 'does-not-exist' } });
      expect(small.manager.create(cmd).ok).toBe(true);
      expect(small.manager.create(cmd)).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
      expect(small.manager.create(createCommand({ repo_source: small.source }))).toMatchObject({ ok: false, error: { code: 'NO_RUNNER' } });
      const final = await waitFor(() => finalState(small.events, cmd.session_id), 'final state');
      expect(final).toMatchObject({ from: 'PREPARING_WORKSPACE', to: 'FAILED', reason: 'branch "does-not-exist" not found in the repository' });
      await waitFor(() => small.manager.activeCount() === 0, 'slot freed');
      // Same id again after it ended: still refused, its seqs are taken.
      expect(small.manager.create(cmd)).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
      expect(small.manager.input({ session_id: 'sess_unknown01', data: 'x', mode: 'raw' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
      expect(small.manager.create(createCommand({ repo_source: small.source, provider: 'claude' }))).toMatchObject({
        ok: false,
        error: { code: 'NO_RUNNER', message: expect.stringContaining('claude') },
      });
    } finally {
      await small.close();
    }
  });
});

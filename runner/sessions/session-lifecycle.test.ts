import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunnerEvent } from '../../protocol';
import { isProcessAlive, sessionProcessStates } from '../pty/process-tree';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { probeReadOnlyPrevention } from '../workspace/read-only';
import type { SessionDeps } from './session';

/** Small enough that the tests see idleness and interim diffs quickly; the values do not matter otherwise. */
const TEST_IDLE_MS = 400;
const TEST_DIFF_INTERVAL_MS = 100;
const TEST_WATCH_DEBOUNCE_MS = 30;

type Harness = SessionHarness;

/** The shared harness with this file's timings (short diff and watch intervals, idle only when asked). */
const makeHarness = (extra: Partial<SessionDeps> = {}): Promise<Harness> =>
  makeSessionHarness('lifecycle', {
    deps: () => ({ idleAfterMs: 60_000, diffIntervalMs: TEST_DIFF_INTERVAL_MS, watchDebounceMs: TEST_WATCH_DEBOUNCE_MS, ...extra }),
  });

const closeHarness = (h: Harness): Promise<void> => h.close();

type Of<T extends RunnerEvent['type']> = Extract<RunnerEvent, { type: T }>;
const ofType = <T extends RunnerEvent['type']>(events: RunnerEvent[], sid: string, type: T): Of<T>[] =>
  events.filter((e): e is Of<T> => e.session_id === sid && e.type === type);
const states = (events: RunnerEvent[], sid: string) => ofType(events, sid, 'SESSION_STATE_CHANGED').map((e) => e.to);
const finalState = (events: RunnerEvent[], sid: string) => ofType(events, sid, 'SESSION_STATE_CHANGED').find((e) => e.to === 'COMPLETED' || e.to === 'FAILED');

async function startShell(h: Harness, overrides: Parameters<typeof createCommand>[0] = { repo_source: h.source }) {
  const cmd = createCommand(overrides);
  const sid = cmd.session_id;
  expect(h.manager.create(cmd).ok).toBe(true);
  await waitFor(() => states(h.events, sid).includes('RUNNING'), 'RUNNING');
  const session = h.manager.get(sid)!;
  const worktree = session.worktree!.path;
  // The prompt: the shell is ready for input.
  await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
  return { sid, session, worktree };
}

describe('session lifecycle with real PTYs and git', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(async () => {
    await closeHarness(h);
  });

  it('pause stops every process of the session (state T), resume continues it; stop works while paused', async () => {
    const { sid, session } = await startShell(h);
    const counter = path.join(h.tmp, 'counter');
    // A child bash as the foreground job: the session always holds at least two processes.
    h.manager.input({ session_id: sid, data: `bash -c 'i=0; while :; do i=$((i+1)); echo $i > ${counter}; sleep 0.02; done'`, mode: 'line' });
    await waitFor(() => fs.existsSync(counter) && Number(fs.readFileSync(counter, 'utf8')) > 2, 'counter running');
    const pid = session.pid!;

    expect(h.manager.pause({ session_id: sid })).toEqual({ ok: true, data: null });
    expect(session.state).toBe('PAUSED_BY_HUMAN');
    // The shell and its foreground job (its own process group) are all stopped.
    await waitFor(() => {
      const st = sessionProcessStates(pid);
      return st.size >= 2 && [...st.values()].every((s) => s === 'T');
    }, 'every process stopped');
    const frozen = fs.readFileSync(counter, 'utf8');
    expect(h.manager.pause({ session_id: sid })).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    expect(h.manager.input({ session_id: sid, data: 'x', mode: 'raw' })).toMatchObject({ ok: false, error: { code: 'CONFLICT', message: expect.stringContaining('paused') } });
    // Everything is in state T, so nothing can have written meanwhile.
    expect(fs.readFileSync(counter, 'utf8')).toBe(frozen);

    expect(h.manager.resume({ session_id: sid })).toEqual({ ok: true, data: null });
    expect(session.state).toBe('RUNNING');
    await waitFor(() => Number(fs.readFileSync(counter, 'utf8')) > Number(frozen), 'counter advancing again');
    expect([...sessionProcessStates(pid).values()].every((s) => s !== 'T')).toBe(true);
    expect(h.manager.resume({ session_id: sid })).toMatchObject({ ok: false, error: { code: 'CONFLICT', message: expect.stringContaining('not paused') } });

    // Pause again, then stop: the stopped processes are woken and ended.
    expect(h.manager.pause({ session_id: sid }).ok).toBe(true);
    await waitFor(() => [...sessionProcessStates(pid).values()].every((s) => s === 'T'), 'stopped again');
    expect(h.manager.stop({ session_id: sid }).ok).toBe(true);
    const final = await waitFor(() => finalState(h.events, sid), 'final state');
    expect(final.to).toBe('COMPLETED');
    expect(states(h.events, sid)).toEqual(['PREPARING_WORKSPACE', 'STARTING_PROVIDER', 'RUNNING', 'PAUSED_BY_HUMAN', 'RUNNING', 'PAUSED_BY_HUMAN', 'STOPPING', 'COMPLETED']);
    const paused = ofType(h.events, sid, 'SESSION_STATE_CHANGED').find((e) => e.to === 'PAUSED_BY_HUMAN');
    expect(paused?.reason).toBe('paused from the control plane');
    expect(isProcessAlive(pid)).toBe(false);
    expect(session.usageTicking).toBe(false);

    expect(h.manager.pause({ session_id: 'sess_unknown01' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(h.manager.resume({ session_id: 'sess_unknown01' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('approve answers NOT_FOUND: no approval can be pending yet', async () => {
    const { sid } = await startShell(h);
    expect(h.manager.approve({ session_id: sid, approval_id: 'appr_1', command_hash: 'h', decision: 'allow', decided_by: 'ann' })).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'no pending approval appr_1 (already decided, expired, or never asked)' },
    });
    expect(h.manager.approve({ session_id: 'sess_unknown01', approval_id: 'appr_1', command_hash: 'h', decision: 'deny', decided_by: 'ann' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('watcher FILE_TOUCHED with room_path and dedupe; DIFF_SUMMARY during the session and final before removal', async () => {
    const { sid, session, worktree } = await startShell(h);
    h.manager.input({
      session_id: sid,
      data: `printf 'a\\nb\\n' > src/new.ts; echo more >> README.md; printf 'x\\0y' > bin.dat; rm docs/guide.md; mkdir -p node_modules/x && echo 1 > node_modules/x/i.js; for n in 1 2 3 4 5; do echo $n >> src/new.ts; done`,
      mode: 'line',
    });
    const expected = [
      { path: 'README.md', added: 1, removed: 0 },
      { path: 'bin.dat', added: null, removed: null },
      { path: 'docs/guide.md', added: 0, removed: 1 },
      { path: 'src/new.ts', added: 7, removed: 0 },
    ];
    // node_modules is not watched, but the sample repository does not ignore it, so git lists it as untracked.
    const interim = await waitFor(
      () => ofType(h.events, sid, 'DIFF_SUMMARY').find((e) => !e.final && e.files.some((f) => f.path === 'src/new.ts' && f.added === 7)),
      'interim DIFF_SUMMARY',
    );
    expect(interim.files.filter((f) => f.path !== 'node_modules/x/i.js')).toEqual(expected);

    const touched = await waitFor(() => {
      const t = ofType(h.events, sid, 'FILE_TOUCHED');
      return ['src/new.ts', 'README.md', 'bin.dat', 'docs/guide.md'].every((p) => t.some((e) => e.path === p)) && t;
    }, 'FILE_TOUCHED for every change');
    expect(touched.find((e) => e.path === 'src/new.ts')).toMatchObject({ room_path: 'src', reason: 'write' });
    expect(touched.find((e) => e.path === 'README.md')).toMatchObject({ room_path: '' });
    expect(touched.find((e) => e.path === 'docs/guide.md')).toMatchObject({ room_path: 'docs' });
    // Six writes to src/new.ts in a burst, one event; nothing from node_modules.
    expect(touched.filter((e) => e.path === 'src/new.ts')).toHaveLength(1);
    expect(touched.some((e) => e.path.startsWith('node_modules'))).toBe(false);
    // A hook reporting the same write inside the window collapses into it; a read is another event.
    expect(session.noteFileTouched(path.join(worktree, 'src', 'new.ts'), 'write', 'hook')).toBe(false);
    expect(session.noteFileTouched('src/lib/deep/x.ts', 'read', 'hook')).toBe(true);
    expect(session.noteFileTouched('../outside.ts', 'read', 'hook')).toBe(false);
    expect(session.noteFileTouched('/etc/passwd', 'read', 'hook')).toBe(false);
    await waitFor(() => ofType(h.events, sid, 'FILE_TOUCHED').some((e) => e.path === 'src/lib/deep/x.ts' && e.room_path === 'src/lib/deep' && e.reason === 'read'), 'hook read');

    // Commit part of it on the agent branch: committed changes still count against the base.
    h.manager.input({ session_id: sid, data: `git add README.md && git commit -qm wip && echo "COMM""ITTED"`, mode: 'line' });
    await waitFor(() => outputOf(h.events, sid).includes('COMMITTED'), 'commit');

    h.manager.stop({ session_id: sid });
    const final = await waitFor(() => finalState(h.events, sid), 'final state');
    const finals = ofType(h.events, sid, 'DIFF_SUMMARY').filter((e) => e.final);
    expect(finals).toHaveLength(1);
    expect(finals[0].files.filter((f) => f.path !== 'node_modules/x/i.js')).toEqual(expected);
    expect(finals[0].seq).toBeLessThan(final.seq);
    expect(fs.existsSync(worktree)).toBe(false);
    // Interim summaries are only sent when something changed.
    const all = ofType(h.events, sid, 'DIFF_SUMMARY').filter((e) => !e.final);
    for (let i = 1; i < all.length; i++) expect(JSON.stringify(all[i].files)).not.toBe(JSON.stringify(all[i - 1].files));
    // Files touched are billed.
    const ticks = ofType(h.events, sid, 'USAGE_TICK');
    expect(ticks.reduce((n, t) => n + t.units.files_touched, 0)).toBeGreaterThanOrEqual(4);
  });

  it('a process killed by a signal ends FAILED "killed by SIGKILL"; its last write is still reported; usage ticks stop', async () => {
    const { sid, session } = await startShell(h);
    h.manager.input({ session_id: sid, data: 'echo last > docs/late.md; kill -KILL $$', mode: 'line' });
    const final = await waitFor(() => finalState(h.events, sid), 'final state');
    expect(final).toMatchObject({ to: 'FAILED', reason: 'killed by SIGKILL', exit_code: null });
    const touched = ofType(h.events, sid, 'FILE_TOUCHED').find((e) => e.path === 'docs/late.md');
    expect(touched).toMatchObject({ room_path: 'docs', reason: 'write' });
    expect(touched!.seq).toBeLessThan(final.seq);
    expect(ofType(h.events, sid, 'DIFF_SUMMARY').find((e) => e.final)?.files).toEqual([{ path: 'docs/late.md', added: 1, removed: 0 }]);
    expect(session.usageTicking).toBe(false);
    const last = h.events.filter((e) => e.session_id === sid).at(-1);
    expect(last?.type).toBe('SESSION_STATE_CHANGED');
  });
});

describe('idle detection', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness({ idleAfterMs: TEST_IDLE_MS });
  });
  afterEach(async () => {
    await closeHarness(h);
  });

  it('RUNNING with no output or input → idle; the next input → working; setActivity only emits on change', async () => {
    const { sid, session } = await startShell(h);
    const idle = await waitFor(() => ofType(h.events, sid, 'AGENT_ACTIVITY').find((e) => e.activity === 'idle'), 'idle');
    expect(idle.detail).toBe(`no output or input for ${TEST_IDLE_MS} ms`);
    expect(session.currentActivity).toBe('idle');
    h.manager.input({ session_id: sid, data: 'echo hi', mode: 'line' });
    await waitFor(() => ofType(h.events, sid, 'AGENT_ACTIVITY').some((e) => e.activity === 'working'), 'working');
    // Quiet again → idle again.
    await waitFor(() => ofType(h.events, sid, 'AGENT_ACTIVITY').filter((e) => e.activity === 'idle').length === 2, 'idle again');
    expect(ofType(h.events, sid, 'AGENT_ACTIVITY').map((e) => e.activity)).toEqual(['idle', 'working', 'idle']);

    // Hooks and idle detection share one method; a repeat is not an event.
    expect(session.setActivity('waiting_for_input', 'Claude is waiting for your input')).toBe(true);
    expect(session.setActivity('waiting_for_input', 'again')).toBe(false);
    // Paused: no idle timer runs; resumed: it counts from the resume.
    expect(h.manager.pause({ session_id: sid }).ok).toBe(true);
    expect(h.manager.resume({ session_id: sid }).ok).toBe(true);
    expect(session.setActivity('working', 'prompt submitted')).toBe(true);
    await waitFor(() => ofType(h.events, sid, 'AGENT_ACTIVITY').filter((e) => e.activity === 'idle').length === 3, 'idle after resume');
    expect(ofType(h.events, sid, 'AGENT_ACTIVITY').map((e) => e.activity)).toEqual(['idle', 'working', 'idle', 'waiting_for_input', 'working', 'idle']);
  });
});

describe('read-only sessions', () => {
  it('the worktree is mounted read-only for the session: root cannot write, the tree is unchanged', async (ctx) => {
    const probe = await probeReadOnlyPrevention();
    if (!probe.available) ctx.skip();
    const h = await makeHarness({ readOnlyPrevention: true });
    try {
      const { sid, worktree } = await startShell(h, { repo_source: h.source, mode: 'read_only' });
      h.manager.input({
        session_id: sid,
        data: `id -u; echo x >> README.md; touch new.txt; chmod u+w README.md; mount -o remount,rw .; echo "DO""NE"`,
        mode: 'line',
      });
      const out = await waitFor(() => {
        const o = outputOf(h.events, sid);
        return o.includes('DONE') && o;
      }, 'commands done');
      expect(out).toContain('README.md: Read-only file system');
      expect(out).toMatch(/new\.txt.*Read-only file system/);
      expect(fs.readFileSync(path.join(worktree, 'README.md'), 'utf8')).toBe('# sample\n');
      expect(fs.existsSync(path.join(worktree, 'new.txt'))).toBe(false);
      h.manager.stop({ session_id: sid });
      await waitFor(() => finalState(h.events, sid), 'final state');
      expect(ofType(h.events, sid, 'DIFF_SUMMARY').find((e) => e.final)?.files).toEqual([]);
    } finally {
      await closeHarness(h);
    }
  });

  it('without the mount, a write is detected and reverted with a warning', async () => {
    const h = await makeHarness({ readOnlyPrevention: false });
    try {
      const { sid, worktree } = await startShell(h, { repo_source: h.source, mode: 'read_only' });
      h.manager.input({ session_id: sid, data: `echo x >> README.md; echo evil > src/evil.ts; rm docs/guide.md`, mode: 'line' });
      await waitFor(() => {
        const msgs = ofType(h.events, sid, 'ALERT_RAISED').map((e) => e.message);
        return ['README.md', 'src/evil.ts', 'docs/guide.md'].every((p) => msgs.includes(`read-only session wrote ${p}; reverted`));
      }, 'three revert alerts');
      expect(ofType(h.events, sid, 'ALERT_RAISED').every((e) => e.severity === 'warning')).toBe(true);
      expect(ofType(h.events, sid, 'ALERT_RAISED').find((e) => e.message.includes('src/evil.ts'))?.room_path).toBe('src');
      expect(fs.readFileSync(path.join(worktree, 'README.md'), 'utf8')).toBe('# sample\n');
      expect(fs.existsSync(path.join(worktree, 'src', 'evil.ts'))).toBe(false);
      expect(fs.readFileSync(path.join(worktree, 'docs', 'guide.md'), 'utf8')).toBe('guide\n');
      h.manager.stop({ session_id: sid });
      await waitFor(() => finalState(h.events, sid), 'final state');
      expect(ofType(h.events, sid, 'DIFF_SUMMARY').find((e) => e.final)?.files).toEqual([]);
      // The revert's own writes were not reported as new violations.
      expect(ofType(h.events, sid, 'ALERT_RAISED')).toHaveLength(3);
    } finally {
      await closeHarness(h);
    }
  });
});

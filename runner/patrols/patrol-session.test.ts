import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunnerEvent } from '../../protocol';
import { demoRepoFiles } from '../testing/demo-repo';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';

/** Real spool, git worktrees and PTYs over a git copy of the lamplighter demo repository (which ships a failing test). */
const makeHarness = () => makeSessionHarness('patrol-session', { repoFiles: demoRepoFiles() });
const of = eventsOf;
const finalState = (events: RunnerEvent[], sid: string) => {
  const last = of(events, sid, 'SESSION_STATE_CHANGED').at(-1);
  return last && (last.to === 'COMPLETED' || last.to === 'FAILED') ? last : undefined;
};
const patrol = (kind: string, command: string, extra: Record<string, unknown> = {}) => ({ patrol_id: 'patrol_1', run_id: 'prun_1', kind, command, ...extra });

describe('patrol sessions (real PTY, read-only worktree)', () => {
  let h: SessionHarness;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(() => h.close());

  it('a failing test patrol streams its output, raises an alert in the room of the failing file, and reports its result', { timeout: 30_000 }, async () => {
    const cmd = createCommand({ repo_source: h.source, mode: 'read_only', patrol: patrol('test', 'npm test') });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    const final = await waitFor(() => finalState(h.events, sid), 'final state', 20_000);
    expect(final.to).toBe('FAILED');
    expect(outputOf(h.events, sid)).toContain('a December evening is dark');
    expect(h.manager.input({ session_id: sid, data: 'x', mode: 'raw' }).ok).toBe(false);

    const alerts = of(h.events, sid, 'ALERT_RAISED');
    expect(alerts.map((a) => ({ room: a.room_path, path: a.path, fp: a.fingerprint, patrol: a.patrol_id }))).toEqual([
      { room: 'tests/core', path: 'tests/core/schedule.test.js', fp: 'test:tests/core/schedule.test.js', patrol: 'patrol_1' },
    ]);
    expect(alerts[0]!.message).toMatch(/a December evening is dark/);
    expect(alerts[0]!.excerpt).toContain('false !== true');

    const [finished] = of(h.events, sid, 'PATROL_FINISHED');
    expect(finished).toMatchObject({ run_id: 'prun_1', kind: 'test', status: 'failed', exit_code: 1, tests: { passed: 7, failed: 1 }, findings: 1 });
    expect(finished!.commit_sha).toMatch(/^[0-9a-f]{40}$/);
    expect(of(h.events, sid, 'TEST_RUN_FINISHED')[0]).toMatchObject({ passed: 7, failed: 1, exit_code: 1 });
    // Metered like any session, and the result comes before the final state.
    expect(of(h.events, sid, 'USAGE_TICK').length).toBeGreaterThan(0);
    expect(finished!.seq).toBeLessThan(final.seq);
  });

  it('the offline checks (av-check deps, av-check secrets) pass on the demo repository', { timeout: 30_000 }, async () => {
    const deps = createCommand({ repo_source: h.source, mode: 'read_only', patrol: patrol('deps', 'av-check deps && av-check secrets') });
    expect(h.manager.create(deps).ok).toBe(true);
    await waitFor(() => finalState(h.events, deps.session_id), 'deps final', 20_000);
    expect(of(h.events, deps.session_id, 'PATROL_FINISHED')[0]).toMatchObject({ status: 'passed', exit_code: 0, findings: 0 });
    expect(outputOf(h.events, deps.session_id)).toContain('av-check secrets: 0 errors');
  });

  it('a command that names no file raises one alert at the building, and a timeout is an error without alerts', { timeout: 30_000 }, async () => {
    const failing = createCommand({ repo_source: h.source, mode: 'read_only', patrol: patrol('lint', 'echo "lint: 3 problems"; exit 3') });
    expect(h.manager.create(failing).ok).toBe(true);
    await waitFor(() => finalState(h.events, failing.session_id), 'final', 20_000);
    const alerts = of(h.events, failing.session_id, 'ALERT_RAISED');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ room_path: '', fingerprint: 'lint:*', message: 'Lint failed (exit 3); the output names no file of the repository' });
    expect(alerts[0]!.excerpt).toContain('lint: 3 problems');

    const slow = createCommand({ repo_source: h.source, mode: 'read_only', patrol: patrol('build', 'sleep 30', { timeout_ms: 1_000 }) });
    expect(h.manager.create(slow).ok).toBe(true);
    await waitFor(() => finalState(h.events, slow.session_id), 'slow final', 20_000);
    expect(of(h.events, slow.session_id, 'ALERT_RAISED')).toEqual([]);
    expect(of(h.events, slow.session_id, 'PATROL_FINISHED')[0]).toMatchObject({ status: 'error', summary: 'Build did not finish: the patrol timed out after 1 second' });
  });

  it('repo:inspect suggests the demo repository’s commands', async () => {
    const d = await h.workspaces.inspect('repo_sample01', h.source);
    expect(d.commands).toMatchObject({ test: 'npm test', build: 'npm run build', lint: null, deps: 'av-check deps', security: 'av-check secrets' });
  });
});

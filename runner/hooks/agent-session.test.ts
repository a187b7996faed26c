import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunnerEvent } from '../../protocol';
import { claudeProvider } from '../providers';
import { demoRepoFiles, FAKE_CLAUDE_PATH } from '../testing/demo-repo';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';

/** The fake agent waits a second per room and really runs `npm test`; this bounds the whole script. */
const AGENT_SCRIPT_TIMEOUT_MS = 30_000;

/** Real spool, git worktrees, PTYs and hook server, over a git copy of the lamplighter demo repository. */
const makeHarness = () =>
  makeSessionHarness('agent-session', {
    repoFiles: demoRepoFiles(),
    hooks: true,
    providers: [claudeProvider({ PATH: process.env.PATH ?? '', AGENT_RUNNER_CLAUDE_BIN: FAKE_CLAUDE_PATH })],
  });
const of = eventsOf;

const finalState = (events: RunnerEvent[], sid: string) => {
  const last = of(events, sid, 'SESSION_STATE_CHANGED').at(-1);
  return last && (last.to === 'COMPLETED' || last.to === 'FAILED') ? last : undefined;
};

describe('provider hooks end to end (real PTY, real hook channel)', () => {
  let h: SessionHarness;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(() => h.close());

  it('the claude adapter launches the fake agent; its hook calls become FILE_TOUCHED, TEST_RUN_*, AGENT_ACTIVITY, then COMPLETED', { timeout: 60_000 }, async () => {
    const cmd = createCommand({ repo_source: h.source, provider: 'claude', room_path: 'src', task: { title: 'Tidy the lamps', goal: 'Touch every room.' } });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);

    const waiting = await waitFor(
      () => of(h.events, sid, 'AGENT_ACTIVITY').find((e) => e.activity === 'waiting_for_input'),
      'waiting_for_input',
      AGENT_SCRIPT_TIMEOUT_MS,
    );
    expect(waiting.detail).toMatch(/turn ended: Done: three rooms updated/);

    // Each room in the order the agent worked in it (the watcher may report the same writes; they are deduped).
    const writes = [...new Set(of(h.events, sid, 'FILE_TOUCHED').filter((e) => e.reason === 'write').map((e) => `${e.room_path}|${e.path}`))];
    expect(writes.slice(0, 3)).toEqual(['src/core|src/core/lamp.js', 'src/api/handlers|src/api/handlers/lamps.js', 'docs/guide|docs/guide/getting-started.md']);

    expect(of(h.events, sid, 'TEST_RUN_STARTED').map((e) => e.command)).toEqual(['npm test']);
    const finished = of(h.events, sid, 'TEST_RUN_FINISHED');
    expect(finished.map(({ command, passed, failed, exit_code }) => ({ command, passed, failed, exit_code }))).toEqual([
      { command: 'npm test', passed: 7, failed: 1, exit_code: 1 },
    ]);

    // Working came before the tools, waiting after the turn; all of it before the test finished and after the writes.
    const activities = of(h.events, sid, 'AGENT_ACTIVITY').map((e) => e.activity);
    expect(activities.slice(0, 2)).toEqual(['working', 'waiting_for_input']);
    const seqOf = (e: RunnerEvent | undefined) => e?.seq ?? -1;
    expect(seqOf(of(h.events, sid, 'TEST_RUN_STARTED')[0])).toBeGreaterThan(seqOf(of(h.events, sid, 'FILE_TOUCHED').find((e) => e.path === 'docs/guide/getting-started.md')));
    expect(seqOf(waiting)).toBeGreaterThan(seqOf(finished[0]));
    expect(outputOf(h.events, sid)).toContain('Tidy the lamps');

    expect(h.manager.input({ session_id: sid, data: 'also the status badge, please', mode: 'line' }).ok).toBe(true);
    const final = await waitFor(() => finalState(h.events, sid), 'final state', AGENT_SCRIPT_TIMEOUT_MS);
    expect(final.to).toBe('COMPLETED');
    expect(final.exit_code).toBe(0);
    expect(of(h.events, sid, 'FILE_TOUCHED').some((e) => e.path === 'src/ui/components/status-badge.js' && e.room_path === 'src/ui/components')).toBe(true);
    // The session's token died with it.
    expect(h.hooks!.sessionCount).toBe(0);
  });

  it('a person typing `npm test` in a shell session gives TEST_RUN_STARTED / TEST_RUN_FINISHED with the counts', { timeout: 30_000 }, async () => {
    const cmd = createCommand({ repo_source: h.source, provider: 'shell' });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    // The prompt ends in "$ " (or "# " as root); only then is PROMPT_COMMAND armed.
    await waitFor(() => of(h.events, sid, 'SESSION_STATE_CHANGED').some((e) => e.to === 'RUNNING') && /[$#] $/.test(outputOf(h.events, sid)), 'prompt');
    expect(h.manager.input({ session_id: sid, data: 'ls >/dev/null', mode: 'line' }).ok).toBe(true);
    expect(h.manager.input({ session_id: sid, data: 'npm test', mode: 'line' }).ok).toBe(true);
    const finished = await waitFor(() => of(h.events, sid, 'TEST_RUN_FINISHED')[0], 'TEST_RUN_FINISHED', 20_000);
    expect(of(h.events, sid, 'TEST_RUN_STARTED').map((e) => e.command)).toEqual(['npm test']);
    expect({ command: finished.command, passed: finished.passed, failed: finished.failed, exit_code: finished.exit_code }).toEqual({ command: 'npm test', passed: 7, failed: 1, exit_code: 1 });

    // A failing command run the same way reports its exit status.
    expect(h.manager.input({ session_id: sid, data: 'npm test -- --test-name-pattern=nothing-matches; false', mode: 'line' }).ok).toBe(true);
    const second = await waitFor(() => of(h.events, sid, 'TEST_RUN_FINISHED')[1], 'second TEST_RUN_FINISHED', 20_000);
    expect(second.exit_code).toBe(1);
    h.manager.stop({ session_id: sid });
    await waitFor(() => finalState(h.events, sid), 'final state');
  });
});

import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerEventSchema, ok, type RunnerEvent } from '../../protocol';
import { claudeProvider, detectProviders, shellProvider } from '../providers';
import { SessionManager } from '../sessions/session-manager';
import { EventSender } from '../spool/sender';
import { Spool } from '../spool/spool';
import { demoRepoFiles, FAKE_CLAUDE_PATH } from '../testing/demo-repo';
import { captureLogger, createCommand, makeSampleRepo, makeTempDir, outputOf, removeTempDir, waitFor } from '../testing/fixtures';
import { WorkspaceManager } from '../workspace/workspace-manager';
import { HookServer } from './hook-server';

/** The fake agent waits a second per room and really runs `npm test`; this bounds the whole script. */
const AGENT_SCRIPT_TIMEOUT_MS = 30_000;

interface Harness {
  tmp: string;
  source: string;
  manager: SessionManager;
  spool: Spool;
  sender: EventSender;
  hooks: HookServer;
  events: RunnerEvent[];
}

/** Real spool, git worktrees, PTYs and hook server, over a git copy of the lamplighter demo repository. */
async function makeHarness(): Promise<Harness> {
  const tmp = await makeTempDir('agent-session');
  const source = makeSampleRepo(path.join(tmp, 'source'), demoRepoFiles());
  const dataDir = path.join(tmp, 'data');
  const log = captureLogger();
  const spool = await Spool.open(path.join(dataDir, 'spool'), { log });
  const workspaces = new WorkspaceManager(dataDir, log);
  await workspaces.init();
  const hooks = await HookServer.start(log);
  const env = { PATH: process.env.PATH ?? '', AGENT_RUNNER_CLAUDE_BIN: FAKE_CLAUDE_PATH };
  const providers = await detectProviders([shellProvider(), claudeProvider(env)], log);
  const manager = new SessionManager({ spool, workspaces, providers, homesDir: path.join(dataDir, 'homes'), log, capacity: 4, stopGraceMs: 300, hooks });
  const events: RunnerEvent[] = [];
  const sender = new EventSender(spool, log);
  sender.attach((batch, done) => {
    events.push(...batch.map((e) => RunnerEventSchema.parse(e)));
    const highest = new Map<string, number>();
    for (const e of batch) highest.set(e.session_id, Math.max(highest.get(e.session_id) ?? 0, e.seq));
    done(ok({ acked: [...highest].map(([session_id, seq]) => ({ session_id, seq })) }));
  });
  return { tmp, source, manager, spool, sender, hooks, events };
}

const of = <T extends RunnerEvent['type']>(events: RunnerEvent[], sid: string, type: T) =>
  events.filter((e): e is Extract<RunnerEvent, { type: T }> => e.session_id === sid && e.type === type);

const finalState = (events: RunnerEvent[], sid: string) => {
  const last = of(events, sid, 'SESSION_STATE_CHANGED').at(-1);
  return last && (last.to === 'COMPLETED' || last.to === 'FAILED') ? last : undefined;
};

describe('provider hooks end to end (real PTY, real hook channel)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(async () => {
    await h.manager.stopAll('test over');
    h.sender.dispose();
    h.spool.close();
    await h.hooks.close();
    await removeTempDir(h.tmp);
  });

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
    expect(h.hooks.sessionCount).toBe(0);
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

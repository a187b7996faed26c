import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../protocol';
import { Api, ROOT, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

const GRACE_MS = 3_000;

/**
 * Issue 14 item 3 / issue 11 item 14: the server owns session state. A runner that was hung past
 * its grace period comes back and delivers, from its spool, the end it saw (STOPPING/COMPLETED
 * after the server already FAILED the session): the output is stored, the state change is
 * refused and audited, and the row keeps the grace reason (endedAt: delivery-ingest.int.test.ts).
 */
describe('delivery: a runner returning after its grace period', () => {
  let stack: Stack;
  let api: Api;
  let runner: ChildProcess;

  beforeAll(async () => {
    stack = await startStack({
      attachedRunner: false,
      env: { AGENT_VILLAGE_RUNNER_GRACE_MS: String(GRACE_MS), AGENT_VILLAGE_PING_INTERVAL_MS: '500', AGENT_VILLAGE_PING_TIMEOUT_MS: '1000' },
    });
    api = new Api(stack.url);
    await api.setupAdmin();
    const { token } = await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'returning' });
    runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', 'returning-1', '--data-dir', join(stack.dataDir, 'returning-runner')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }, 180_000);
  afterAll(async () => {
    runner?.kill('SIGCONT');
    runner?.kill('SIGKILL');
    await stack?.stop();
  });

  it('cannot move the session the server failed: the late end is stored as events, refused as state, audited', async () => {
    const repo = await api.readyRepo();
    const s = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: 'src', provider: 'shell' });
    await api.waitState(s.id, ['RUNNING']);
    const w = new TerminalWatcher(await uiSocket(stack.url, api.cookie), s.id);
    await w.attach();
    // The shell ends by itself while its runner is frozen; the runner only sees it when it thaws.
    await w.type('echo started; sleep 2; echo late-$((40+2)); exit\r');
    await w.waitText('started\r\n');
    w.socket.close();

    runner.kill('SIGSTOP'); // hung: no heartbeats, no pings
    const failed = await api.waitState(s.id, ['FAILED'], 30_000);
    expect(failed.reason).toMatch(/did not come back within 3 s/);

    runner.kill('SIGCONT');
    // Back: its spool delivers the output and the end it recorded.
    await waitFor(
      async () => {
        const check = new TerminalWatcher(await uiSocket(stack.url, api.cookie), s.id);
        await check.attach();
        check.socket.close();
        return check.events.some((e) => e.type === 'SESSION_STATE_CHANGED' && e.payload?.to === 'COMPLETED') ? check : null;
      },
      'the late COMPLETED to be stored as an event',
      60_000,
    ).then((stored) => {
      expect(stored.text()).toContain('late-42');
      stored.events.forEach((e, i) => expect(e.seq).toBe(i + 1));
    });
    const row = await api.session(s.id);
    expect(row.state).toBe('FAILED');
    expect(row.reason).toBe(failed.reason);
    const audit = await api.ok<Array<{ target: string; detail: { from: string; to: string } }>>('GET', '/api/audit?action=session.transition_refused');
    const mine = audit.filter((a) => a.target === s.id).map((a) => `${a.detail.from}→${a.detail.to}`);
    expect(mine).toContain('FAILED→COMPLETED');
  }, 120_000);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../protocol';
import { Api, ROOT, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/** A runner started by hand, as on another machine. */
function startRunner(url: string, token: string, dataDir: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', url, '--name', 'remote-1', '--data-dir', dataDir], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

describe('delivery: runner SIGKILL mid-output, restart', () => {
  let stack: Stack;
  let api: Api;
  let runner: ChildProcess;
  let token: string;
  const runnerDir = () => join(stack.dataDir, 'remote-runner');

  beforeAll(async () => {
    stack = await startStack({ attachedRunner: false });
    api = new Api(stack.url);
    await api.setupAdmin();
    token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'remote' })).token;
    runner = startRunner(stack.url, token, runnerDir());
  });
  afterAll(async () => {
    runner?.kill('SIGKILL');
    await stack?.stop();
  });

  it('loses no acknowledged event, duplicates none, and records the gap', async () => {
    const repo = await api.readyRepo();
    const session = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: 'src', provider: 'shell' });
    await api.waitState(session.id, ['RUNNING']);
    const watcher = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await watcher.attach();
    await watcher.type('for i in $(seq 1 2000000); do echo line-$i; done\r');
    await watcher.waitText(/line-20000\r\n/, 'output flowing');

    runner.kill('SIGKILL');
    await waitFor(async () => (await api.world()).runners.every((r) => !r.online), 'runner offline');
    const stored = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await stored.attach();
    const beforeRestart = stored.events.map((e) => `${e.seq}:${e.data ?? e.type}`);

    runner = startRunner(stack.url, token, runnerDir());
    await api.waitState(session.id, ['FAILED']);

    const after = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await after.attach();
    const seqs = after.events.map((e) => e.seq);
    expect(seqs[0]).toBe(1);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
    // Everything stored before the restart is still there, unchanged: nothing lost, nothing doubled.
    expect(after.events.slice(0, beforeRestart.length).map((e) => `${e.seq}:${e.data ?? e.type}`)).toEqual(beforeRestart);
    const gap = after.events.find((e) => e.type === 'OUTPUT_GAP');
    expect(gap).toBeTruthy();
    const failed = after.events.findLast((e) => e.type === 'SESSION_STATE_CHANGED');
    expect(failed?.payload?.to).toBe('FAILED');
    // The lines that did arrive are exactly 1, 2, 3, … with none repeated or skipped.
    const nums = [...after.text().matchAll(/line-(\d+)\r\n/g)].map((m) => Number(m[1]));
    expect(nums.length).toBeGreaterThan(20000);
    nums.forEach((n, i) => expect(n).toBe(i + 1));
    for (const w of [watcher, stored, after]) w.socket.close();
  }, 120_000);
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { QuestStepUpdate } from '../../protocol';
import { makeRepo } from '../dta/testing/fixture-repos';
import { silentLogger } from '../log';
import { WorkspaceManager } from '../workspace/workspace-manager';
import { WorkItemService } from './service';

/** The runner's quest commands: bad input is a clear error and starts nothing; a good level runs and reports each step. */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function service(canReach?: (s: string) => boolean) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wi-service-'));
  dirs.push(dataDir);
  const workspaces = new WorkspaceManager(dataDir, silentLogger);
  await workspaces.init();
  const updates: QuestStepUpdate[] = [];
  const svc = new WorkItemService({ workspaces, publish: (u) => updates.push(u), log: silentLogger, dataDir, agentCommands: {}, capacity: 2, ...(canReach ? { canReach } : {}) });
  return { svc, updates, dataDir };
}

const level = (source: string, items: unknown[]) => ({ quest_id: 'qst_service1', org_id: 'org', repo_id: 'repo_service', repo_source: source, branch: 'agent/qst_service1', base_ref: 'main', items });
const testItem = (step: string, command: string) => ({
  step_id: step,
  attempt: 1,
  work_item: { id: `wi_service_${step}`, agent_id: 'test', description: step, dependencies: [], constraints: { max_files: 0, max_tool_ops: 5, max_delta_size: 0, timeout_ms: 60_000 }, budget: { time_estimate_ms: 1, complexity: 'low' }, skill: 'test', params: { command } },
});

describe('workitem:run-level on the runner', () => {
  it('refuses bad input with a clear error and starts nothing', async () => {
    const { svc, updates, dataDir } = await service();
    const repo = makeRepo({ 'a.txt': 'a\n' }, 'wi-service');
    dirs.push(repo);
    const cases: [unknown, RegExp][] = [
      [{ quest_id: 'nope' }, /Invalid message/],
      [level(repo, []), /items/],
      [level(repo, [testItem('same', 'true'), testItem('same', 'true')]), /each step once per level/],
      [level(repo, [{ ...testItem('x', 'true'), attempt: 0 }]), /attempt/],
      ['not an object', /Invalid message/],
    ];
    for (const [raw, message] of cases) {
      const r = svc.runLevel(raw);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(message) });
    }
    expect(updates).toEqual([]);
    expect(fs.readdirSync(path.join(dataDir, 'worktrees'))).toEqual([]);
    const unreachable = await service(() => false);
    expect(unreachable.svc.runLevel(level(repo, [testItem('t', 'true')]))).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
  });

  it('a good level is accepted at once and each step reports on its own', async () => {
    const { svc, updates } = await service();
    const repo = makeRepo({ 'a.txt': 'a\n' }, 'wi-service');
    dirs.push(repo);
    expect(svc.runLevel(level(repo, [testItem('pass', 'test -f a.txt'), testItem('fail', 'exit 4')]))).toEqual({ ok: true, data: { accepted: true } });
    await expect.poll(() => updates.length, { timeout: 60_000 }).toBe(2);
    const by = Object.fromEntries(updates.map((u) => [u.step_id, u.outcome.kind === 'ran' ? u.outcome.result.status : '']));
    expect(by).toEqual({ fail: 'failure', pass: 'success' });
    await svc.close('qst_service1');
  }, 120_000);
});

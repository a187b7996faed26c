import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkItem } from '../../protocol';
import { gitIn, makeRepo } from '../dta/testing/fixture-repos';
import { runLevel, type LevelDeps, type LevelOutcome } from './level';
import { stepEnv } from './skills';
import { stateHash } from './state';

/**
 * A DAG level for real: git worktrees from the level's base, the fake agent in each, merges into
 * the quest tree in step id order. Concurrency is read from what happened (the steps' run
 * intervals overlap or not), never from how long anything took.
 */
const FAKE_AGENT = path.resolve(import.meta.dirname, '../../e2e/fixtures/fake-agent/fake-headless.mjs');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup(parallel: number): { repo: string; deps: LevelDeps } {
  const repo = makeRepo({ 'src/a.js': 'export const a = 1;\n', 'README.md': '# r\n' }, 'level');
  const trees = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'level-trees-')));
  const receipts = fs.mkdtempSync(path.join(os.tmpdir(), 'level-receipts-'));
  dirs.push(repo, trees, receipts);
  const deps: LevelDeps = {
    questRoot: repo,
    parallel,
    options: { agentCommands: { fake: [process.execPath, FAKE_AGENT] }, env: stepEnv(os.tmpdir()) },
    receiptDir: (step) => path.join(receipts, step),
    async makeTree(step, base) {
      const wt = path.join(trees, step);
      gitIn(repo, 'worktree', 'add', '-q', '-b', `step/${step}`, wt, base);
      return {
        path: wt,
        remove: async () => {
          gitIn(repo, 'worktree', 'remove', '--force', wt);
          gitIn(repo, 'branch', '-q', '-D', `step/${step}`);
        },
      };
    },
  };
  return { repo, deps };
}

const item = (step: string, prompt: string): { step_id: string; work_item: WorkItem } => ({
  step_id: step,
  work_item: {
    id: `wi_level_${step}`,
    agent_id: 'agent.fake',
    description: step,
    dependencies: [],
    constraints: { max_files: 10, max_tool_ops: 50, max_delta_size: 100, timeout_ms: 120_000 },
    budget: { time_estimate_ms: 1000, complexity: 'high' },
    skill: 'agent.fake',
    params: { prompt },
  },
});

const overlap = (a: LevelOutcome, b: LevelOutcome) => a.started_at < b.ended_at && b.started_at < a.ended_at;
const leftovers = (repo: string) => ({
  worktrees: gitIn(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length,
  branches: gitIn(repo, 'branch', '--list', 'step/*').trim(),
});

describe('a DAG level: parallel steps in their own worktrees, merged in step id order', () => {
  it('independent steps run at the same time and both land on the quest branch, in step id order', async () => {
    const { repo, deps } = setup(4);
    const base = gitIn(repo, 'rev-parse', 'HEAD').trim();
    // Listed out of order on purpose: the merge order is the step ids', not the caller's.
    const out = await runLevel([item('beta', 'write b.txt=b; sleep 1500'), item('alpha', 'write a.txt=a; sleep 1500')], deps);
    expect(out.map((o) => [o.step_id, o.execution.result.status])).toEqual([
      ['alpha', 'success'],
      ['beta', 'success'],
    ]);
    expect(overlap(out[0]!, out[1]!)).toBe(true);
    expect(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8')).toBe('b\n');
    // Both step commits came from the level base; alpha's was merged first (a fast-forward), then beta's.
    const [alpha, beta] = out.map((o) => o.execution.receipt!);
    expect(alpha!.before_commit).toBe(base);
    expect(beta!.before_commit).toBe(base);
    expect(gitIn(repo, 'rev-parse', 'HEAD^1').trim()).toBe(alpha!.after_commit);
    expect(gitIn(repo, 'rev-parse', 'HEAD^2').trim()).toBe(beta!.after_commit);
    expect(out[1]!.execution.result.created_files).toEqual([path.join(repo, 'b.txt')]);
    expect(leftovers(repo)).toEqual({ worktrees: 1, branches: '' });
  }, 120_000);

  it('the parallelism bound holds: with 1 at a time the steps do not overlap', async () => {
    const { deps } = setup(1);
    const out = await runLevel([item('one', 'write one.txt=1; sleep 300'), item('two', 'write two.txt=2; sleep 300')], deps);
    expect(out.every((o) => o.execution.result.status === 'success')).toBe(true);
    expect(overlap(out[0]!, out[1]!)).toBe(false);
  }, 120_000);

  it('a merge conflict fails the later step, names the file, and leaves nothing of it behind', async () => {
    const { repo, deps } = setup(4);
    const out = await runLevel([item('first', 'write src/a.js=export const a = 2'), item('second', 'write src/a.js=export const a = 3; write extra.txt=x')], deps);
    const [first, second] = out;
    expect(first!.execution.result.status).toBe('success');
    expect(second!.execution.result).toMatchObject({ status: 'failure', error: 'Merge conflict with the steps merged before it (first) in src/a.js; the step was rolled back' });
    expect(second!.execution.receipt).toBeNull();
    // The quest tree is exactly the first step's result: the second's files are nowhere.
    expect(await stateHash(repo)).toBe(first!.execution.result.output_hash);
    expect(second!.execution.result.output_hash).toBe(first!.execution.result.output_hash);
    expect(fs.existsSync(path.join(repo, 'extra.txt'))).toBe(false);
    expect(gitIn(repo, 'status', '--porcelain')).toBe('');
    expect(gitIn(repo, 'rev-parse', 'HEAD').trim()).toBe(first!.execution.receipt!.after_commit);
    expect(leftovers(repo)).toEqual({ worktrees: 1, branches: '' });
  }, 120_000);

  it('a failed step is not merged; the others are', async () => {
    const { repo, deps } = setup(4);
    const out = await runLevel([item('bad', 'write bad.txt=x; fail'), item('good', 'write good.txt=y')], deps);
    expect(out.map((o) => o.execution.result.status)).toEqual(['failure', 'success']);
    expect(fs.existsSync(path.join(repo, 'bad.txt'))).toBe(false);
    expect(fs.existsSync(path.join(repo, 'good.txt'))).toBe(true);
    expect(execFileSync('git', ['log', '--format=%s', '-1'], { cwd: repo, encoding: 'utf8' })).toContain('good');
  }, 120_000);

  it('a step whose worktree cannot be made fails alone; the rest of the level runs and merges', async () => {
    const { repo, deps } = setup(4);
    const make = deps.makeTree;
    deps.makeTree = (step, base) => (step === 'broken' ? Promise.reject(new Error('disk full')) : make(step, base));
    const out = await runLevel([item('broken', 'write x.txt=x'), item('works', 'write y.txt=y')], deps);
    expect(out.map((o) => [o.step_id, o.execution.result.status, o.execution.result.error ?? ''])).toEqual([
      ['broken', 'failure', "could not make the step's worktree: disk full"],
      ['works', 'success', ''],
    ]);
    expect(fs.existsSync(path.join(repo, 'y.txt'))).toBe(true);
    expect(leftovers(repo)).toEqual({ worktrees: 1, branches: '' });
  }, 120_000);
});

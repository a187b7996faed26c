import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Receipt, WorkItem } from '../../protocol';
import { makeRepo, SITE_FILES } from '../dta/testing/fixture-repos';
import { HookServer } from '../hooks';
import { silentLogger } from '../log';
import { executeWorkItem, type ExecuteOptions } from './execute';
import { replayReceipt } from './replay';
import { stepEnv } from './skills';
import { stateHash } from './state';

/** The contract's three tests (agentrun-contract.md "Testing Contract"), for real: git, files, processes. */

const FAKE_AGENT = path.resolve(import.meta.dirname, '../../e2e/fixtures/fake-agent/fake-headless.mjs');
const agentCommands = { fake: [process.execPath, FAKE_AGENT] };
const dirs: string[] = [];
let hooks: HookServer;
beforeAll(async () => {
  // The runner's real hook channel: the fake CLI reports its tool calls on it, as the real CLIs do.
  hooks = await HookServer.start(silentLogger);
});
afterAll(async () => {
  await hooks?.close();
});
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup(files: Record<string, string> = { 'src/a.js': 'export const a = 1;\n', 'README.md': '# r\n' }): { repo: string; opts: ExecuteOptions } {
  const repo = makeRepo(files, 'workitem');
  const receiptDir = fs.mkdtempSync(path.join(os.tmpdir(), 'receipts-'));
  dirs.push(repo, receiptDir);
  return { repo, opts: { root: repo, receiptDir, agentCommands, env: stepEnv(os.tmpdir()), hooks } };
}

function item(over: Partial<WorkItem>): WorkItem {
  return {
    id: 'wi_test_1',
    agent_id: 'agent-1',
    description: 'a test step',
    dependencies: [],
    constraints: { max_files: 10, max_tool_ops: 50, max_delta_size: 100, timeout_ms: 60_000 },
    budget: { time_estimate_ms: 1000, complexity: 'low' },
    skill: 'agent.fake',
    params: { prompt: 'write src/b.js=export const b = 2;' },
    ...over,
  };
}

const gitLog = (repo: string) => execFileSync('git', ['log', '--format=%H'], { cwd: repo, encoding: 'utf8' }).trim().split('\n');

describe('work items: atomicity, admission, replay (agentrun-contract.md)', () => {
  it('Test 1: a failing test rolls back; the state hash is unchanged', async () => {
    const { repo, opts } = setup();
    const beforeHash = await stateHash(repo);
    const commits = gitLog(repo);
    const out = await executeWorkItem(item({ params: { prompt: 'write src/b.js=broken; write src/a.js=changed' }, test_command: 'echo "1 failed"; exit 1' }), opts);
    expect(out.result.status).toBe('failure');
    expect(out.result.error).toBe('Tests failed');
    expect(out.result.metrics.tests_failed).toBe(1);
    expect(await stateHash(repo)).toBe(beforeHash);
    expect(out.result.output_hash).toBe(beforeHash);
    expect(fs.existsSync(path.join(repo, 'src/b.js'))).toBe(false);
    expect(gitLog(repo)).toEqual(commits);
    expect(out.receipt).toBeNull();
  });

  it('Test 2: max_files 1 and an agent that touches two files → denied, rolled back', async () => {
    const { repo, opts } = setup();
    const beforeHash = await stateHash(repo);
    const out = await executeWorkItem(item({ constraints: { max_files: 1, max_tool_ops: 50, max_delta_size: 100, timeout_ms: 60_000 }, params: { prompt: 'write src/b.js=b; write src/c.js=c' } }), opts);
    expect(out.result.status).toBe('denied');
    expect(out.result.denial_reason).toContain('Exceeded max files');
    expect(out.result.denial_reason).toBe('Exceeded max files: 2 > 1');
    expect(await stateHash(repo)).toBe(beforeHash);
  });

  it('counts tool ops (the agent, each reported tool call, the test command) and changed lines', async () => {
    const { repo, opts } = setup();
    const beforeHash = await stateHash(repo);
    const ops = await executeWorkItem(item({ constraints: { max_files: 10, max_tool_ops: 3, max_delta_size: 100, timeout_ms: 60_000 }, params: { prompt: 'write a=1; write b=2; write c=3' } }), opts);
    expect(ops.result).toMatchObject({ status: 'denied', denial_reason: 'Exceeded max tool ops: 4 > 3' });
    const lines = await executeWorkItem(item({ constraints: { max_files: 10, max_tool_ops: 50, max_delta_size: 1, timeout_ms: 60_000 }, params: { prompt: 'write a=1; write b=2' } }), opts);
    expect(lines.result).toMatchObject({ status: 'denied', denial_reason: 'Exceeded max delta size: 2 > 1' });
    expect(await stateHash(repo)).toBe(beforeHash);
  });

  it('a step past timeout_ms is ended and rolled back', async () => {
    const { repo, opts } = setup();
    const beforeHash = await stateHash(repo);
    const out = await executeWorkItem(item({ constraints: { max_files: 10, max_tool_ops: 50, max_delta_size: 100, timeout_ms: 1500 }, params: { prompt: 'write src/late.js=late; sleep 60000' } }), opts);
    expect(out.result.status).toBe('timeout');
    expect(await stateHash(repo)).toBe(beforeHash);
  });

  it('an agent step that passes commits, receipts, and its patch replays to the same hash', async () => {
    const { repo, opts } = setup();
    const out = await executeWorkItem(item({ test_command: 'test -f src/b.js' }), opts);
    expect(out.result.status).toBe('success');
    expect(out.result.created_files).toEqual([path.join(repo, 'src/b.js')]);
    expect(out.result.output_hash).toBe(await stateHash(repo));
    expect(Object.keys(out.result.artifact_hashes)).toEqual(['src/b.js']);
    const receipt = JSON.parse(fs.readFileSync(out.result.receipt_path, 'utf8')) as Receipt;
    expect(receipt).toMatchObject({ replay: 'patch', after_hash: out.result.output_hash, after_commit: out.head });
    expect(await replayReceipt(receipt, repo)).toMatchObject({ verified: true, actual_hash: out.result.output_hash });
    const tampered = { ...receipt, patch: receipt.patch.replace('export const b = 2', 'export const b = 3') };
    expect(await replayReceipt(tampered, repo)).toMatchObject({ verified: false, detail: expect.stringContaining('does not match its hash') });
    expect(await replayReceipt({ ...receipt, after_hash: 'f'.repeat(64) }, repo)).toMatchObject({ verified: false, detail: expect.stringContaining('hash mismatch') });
  });

  it('Test 3: a DTA step (dry-run, then apply of the approved patch) replays through replay.sh to its output_hash', async () => {
    const { repo, opts } = setup(SITE_FILES);
    const params = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };
    const dta = { max_files: 5000, max_tool_ops: 1, max_delta_size: 1_000_000, timeout_ms: 120_000 };
    const dry = await executeWorkItem(item({ id: 'wi_dry_run', skill: 'dta.link_updater', params: { mode: 'dry-run', params }, constraints: { ...dta, max_files: 0, max_delta_size: 0 } }), opts);
    expect(dry.result.error ?? '').toBe('');
    expect(dry.result.status).toBe('success');
    const sha = dry.skill?.dta?.patch_sha256;
    expect(sha).toMatch(/^[0-9a-f]{64}$/);
    const applied = await executeWorkItem(item({ id: 'wi_apply', skill: 'dta.link_updater', params: { mode: 'apply', params, expected_patch_sha256: sha }, constraints: dta }), { ...opts, receiptDir: path.join(opts.receiptDir, 'apply') });
    expect(applied.result.status).toBe('success');
    expect(applied.result.modified_files.length).toBeGreaterThan(1);
    expect(fs.readFileSync(path.join(repo, 'site/index.html'), 'utf8')).toContain('https://new.example.com/about');
    const script = spawnSync('bash', [applied.result.proof_script!, repo], { encoding: 'utf8' });
    expect(script.stdout).toContain('Replay successful');
    expect(script.status).toBe(0);
    const replayed = JSON.parse(script.stdout.split('\n')[0]!) as { actual_hash: string; replay: string };
    expect(replayed).toMatchObject({ replay: 'rerun', actual_hash: applied.result.output_hash });
    // An apply bound to another patch is refused and leaves nothing behind.
    const h = await stateHash(repo);
    const wrong = await executeWorkItem(item({ id: 'wi_wrong_patch', skill: 'dta.link_updater', params: { mode: 'apply', params, expected_patch_sha256: 'a'.repeat(64) }, constraints: dta }), opts);
    expect(wrong.result.status).toBe('failure');
    expect(await stateHash(repo)).toBe(h);
  }, 180_000); // three DTA runs, each with its verifier process, and a replay: slow on a loaded machine

  it('a malformed work item is a failure result, not a throw', async () => {
    const { opts } = setup();
    const out = await executeWorkItem({ id: 'nope' } as unknown as WorkItem, opts);
    expect(out.result.status).toBe('failure');
    expect(out.result.error).toMatch(/not a work item/);
  });
});

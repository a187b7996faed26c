import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Receipt, WorkItem } from '../../protocol';
import { BlueprintCatalog } from '../blueprints/catalog';
import { makeRepo } from '../dta/testing/fixture-repos';
import { silentLogger } from '../log';
import { executeWorkItem, type ExecuteOptions } from './execute';
import { replayReceipt } from './replay';
import { stepEnv } from './skills';
import { stateHash } from './state';

/**
 * blueprint.<name> steps for real: a blueprint file in a real catalog folder, its command run by
 * the deterministic executor's engine in the step's worktree, then admission, tests, commit,
 * RECEIPT.json — and replay by re-running it (through the runner's catalog and through replay.sh).
 */
const BLUEPRINT = {
  name: 'stamp-header',
  description: 'Writes HEADER.txt from its text parameter (deterministic)',
  command: `python3 -c "import json, sys; p = json.load(sys.stdin); open('HEADER.txt', 'w').write(p['text'] * p['times'] + '\\n')"`,
  parameters_schema: { type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1 }, times: { type: 'integer', minimum: 1, default: 2 } }, additionalProperties: false },
  timeout_seconds: 60,
};
let dir: string;
let catalog: BlueprintCatalog;
const cleanup: string[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-catalog-'));
  fs.writeFileSync(path.join(dir, 'stamp-header.json'), JSON.stringify(BLUEPRINT));
  catalog = new BlueprintCatalog(dir, silentLogger);
  await catalog.start();
  expect(catalog.get('stamp-header')).toBeDefined();
});
afterAll(() => {
  catalog.close();
  for (const d of [dir, ...cleanup]) fs.rmSync(d, { recursive: true, force: true });
});

function setup(): { repo: string; opts: ExecuteOptions } {
  const repo = makeRepo({ 'README.md': '# r\n' }, 'bp-step');
  const receiptDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-receipts-'));
  cleanup.push(repo, receiptDir);
  return { repo, opts: { root: repo, receiptDir, agentCommands: {}, env: stepEnv(os.tmpdir()), blueprints: catalog } };
}

const item = (params: Record<string, unknown>, over: Partial<WorkItem> = {}): WorkItem => ({
  id: 'wi_bp_step_1',
  agent_id: 'blueprint.stamp-header',
  description: 'stamp the header',
  dependencies: [],
  constraints: { max_files: 5, max_tool_ops: 5, max_delta_size: 100, timeout_ms: 60_000 },
  budget: { time_estimate_ms: 1000, complexity: 'low' },
  skill: 'blueprint.stamp-header',
  params,
  ...over,
});

describe('blueprint steps as work items', () => {
  it('runs in the worktree, passes admission and tests, commits, receipts, and replays by re-running', async () => {
    const { repo, opts } = setup();
    const out = await executeWorkItem(item({ text: 'ab' }, { test_command: 'grep -qx abab HEADER.txt' }), opts);
    expect(out.result.error ?? '').toBe('');
    expect(out.result).toMatchObject({ status: 'success', metrics: { tool_ops_count: 2, files_touched: 1 } });
    // The schema's default (times: 2) was filled in by the catalog's validator.
    expect(fs.readFileSync(path.join(repo, 'HEADER.txt'), 'utf8')).toBe('abab\n');
    const receipt = JSON.parse(fs.readFileSync(out.result.receipt_path, 'utf8')) as Receipt;
    expect(receipt).toMatchObject({ replay: 'rerun', after_hash: out.result.output_hash, blueprint: { name: 'stamp-header', command: BLUEPRINT.command } });
    expect(await replayReceipt(receipt, repo, { blueprints: catalog })).toMatchObject({ verified: true, actual_hash: out.result.output_hash });
    // replay.sh has no runner: it re-runs the command the receipt recorded.
    const script = spawnSync('bash', [out.result.proof_script!, repo], { encoding: 'utf8' });
    expect(script.stdout).toContain('Replay successful');
  }, 120_000);

  it('a receipt whose blueprint changed since is a mismatch, not a silent re-run of another command', async () => {
    const { repo, opts } = setup();
    const out = await executeWorkItem(item({ text: 'x' }), opts);
    const receipt = JSON.parse(fs.readFileSync(out.result.receipt_path, 'utf8')) as Receipt;
    const changed = { ...receipt, blueprint: { ...receipt.blueprint!, command: 'python3 -c "print(1)"' } };
    expect(await replayReceipt(changed, repo, { blueprints: catalog })).toMatchObject({ verified: false, detail: expect.stringContaining('changed since the receipt') });
  }, 120_000);

  it('bad parameters, failing tests, admission and a missing blueprint: each a clear result, rolled back', async () => {
    const { repo, opts } = setup();
    const before = await stateHash(repo);
    const bad = await executeWorkItem(item({ text: '' }), opts);
    expect(bad.result).toMatchObject({ status: 'failure', error: expect.stringMatching(/^invalid parameters for blueprint "stamp-header": .*text/) });
    const tests = await executeWorkItem(item({ text: 'zz' }, { test_command: 'exit 3' }), opts);
    expect(tests.result).toMatchObject({ status: 'failure', error: 'Tests failed' });
    const denied = await executeWorkItem(item({ text: 'zz' }, { constraints: { max_files: 0, max_tool_ops: 5, max_delta_size: 100, timeout_ms: 60_000 } }), opts);
    expect(denied.result).toMatchObject({ status: 'denied', denial_reason: 'Exceeded max files: 1 > 0' });
    const missing = await executeWorkItem(item({ text: 'zz' }, { skill: 'blueprint.nope' }), opts);
    expect(missing.result).toMatchObject({ status: 'failure', error: 'this runner has no blueprint named "nope"' });
    expect(await stateHash(repo)).toBe(before);
    expect(fs.existsSync(path.join(repo, 'HEADER.txt'))).toBe(false);
  }, 120_000);
});

import path from 'node:path';
import { QUEST_LIMITS, WorkItemSchema, type Receipt, type RunResult, type WorkItem } from '../../protocol';
import { git } from '../workspace/git';
import { fitsInReceipt, newReceiptId, patchHash, writeReceipt } from './receipt';
import { isDeterministicSkill, runShell, runSkill, type SkillContext, type SkillOutcome } from './skills';
import { testCounts } from './run-command';
import { checkpoint, COMMITTER, deltaSince, fileHash, rollback, stateHash, type Delta } from './state';

/**
 * agentrun-contract.md's executeWorkItem: checkpoint → the step under its deadline → admission
 * (max_files, max_tool_ops, max_delta_size) → test_command → commit + receipt; on deny, test
 * failure, timeout or error the tree goes back to the checkpoint (its state hash equals the
 * checkpoint's). Never throws: every outcome is a RunResult.
 */

export interface ExecuteOptions extends Omit<SkillContext, 'root' | 'deadline'> {
  /** A git work tree on the quest's branch. */
  root: string;
  /** Where RECEIPT.json and replay.sh go (outside the tree). */
  receiptDir: string;
}

export interface WorkItemExecution {
  result: RunResult;
  receipt: Receipt | null;
  /** The quest branch's HEAD afterwards (the step commit on success, the checkpoint otherwise). */
  head: string;
  skill: SkillOutcome | null;
}

export function checkAdmission(delta: Delta, toolOps: number, c: WorkItem['constraints']): { ok: true } | { ok: false; reason: string } {
  const files = delta.modified.length + delta.created.length + delta.deleted.length;
  if (files > c.max_files) return { ok: false, reason: `Exceeded max files: ${files} > ${c.max_files}` };
  if (toolOps > c.max_tool_ops) return { ok: false, reason: `Exceeded max tool ops: ${toolOps} > ${c.max_tool_ops}` };
  if (delta.lines > c.max_delta_size) return { ok: false, reason: `Exceeded max delta size: ${delta.lines} > ${c.max_delta_size}` };
  return { ok: true };
}

const EMPTY_DELTA: Delta = { modified: [], created: [], deleted: [], lines: 0 };

export async function executeWorkItem(raw: WorkItem, opts: ExecuteOptions): Promise<WorkItemExecution> {
  const started = Date.now();
  const parsed = WorkItemSchema.safeParse(raw);
  const item = parsed.success ? parsed.data : null;
  const deadline = started + (item?.constraints.timeout_ms ?? 0);
  const receiptId = newReceiptId();
  let before: string | null = null;
  let beforeHash = '';
  let toolOps = 0;
  let delta = EMPTY_DELTA;
  let skill: SkillOutcome | null = null;
  let testOutput: string | undefined;
  let tests: { passed: number; failed: number } | null = null;

  const result = (status: RunResult['status'], extra: Partial<RunResult>, outputHash: string): RunResult => ({
    status,
    receipt_id: receiptId,
    receipt_path: '',
    modified_files: [],
    created_files: [],
    deleted_files: [],
    output_hash: outputHash,
    artifact_hashes: {},
    metrics: { execution_time_ms: Date.now() - started, tool_ops_count: toolOps, delta_size: delta.lines, files_touched: delta.modified.length + delta.created.length + delta.deleted.length, ...(tests ? { tests_passed: tests.passed, tests_failed: tests.failed } : {}) },
    ...(testOutput !== undefined ? { test_output: testOutput.slice(-QUEST_LIMITS.MAX_TEST_OUTPUT_CHARS) } : {}),
    ...extra,
  });
  /** Every unhappy ending: back to the checkpoint, and the hash proves it. */
  const undo = async (status: Exclude<RunResult['status'], 'success'>, extra: Partial<RunResult>): Promise<WorkItemExecution> => {
    if (before) await rollback(opts.root, before);
    const h = before ? await stateHash(opts.root) : '';
    return { result: result(status, extra, h), receipt: null, head: before ?? '', skill };
  };

  if (!item) return { result: result('failure', { error: `not a work item: ${parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` }, ''), receipt: null, head: '', skill };
  try {
    before = await checkpoint(opts.root, `checkpoint before ${item.id}`);
    beforeHash = await stateHash(opts.root);
    const { receiptDir: _receiptDir, ...skillOpts } = opts;
    skill = await runSkill(item, { ...skillOpts, deadline });
    toolOps += skill.toolOps;
    if (skill.timedOut || Date.now() > deadline) return await undo('timeout', { error: `timeout_ms (${item.constraints.timeout_ms}) passed${skill.error ? `: ${skill.error}` : ''}` });
    if (!skill.ok) return await undo('failure', { error: skill.error ?? 'the step failed', ...(skill.output ? { test_output: skill.output.slice(-QUEST_LIMITS.MAX_TEST_OUTPUT_CHARS) } : {}) });

    delta = await deltaSince(opts.root, before);
    const testOps = item.test_command ? 1 : 0;
    const admitted = checkAdmission(delta, toolOps + testOps, item.constraints);
    if (!admitted.ok) return await undo('denied', { denial_reason: admitted.reason });

    if (item.test_command) {
      toolOps += 1;
      const { receiptDir: _r, ...shellOpts } = opts;
      const t = await runShell(item.test_command, { ...shellOpts, deadline });
      testOutput = t.output;
      tests = testCounts(t.output) ?? (t.code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 });
      if (t.timedOut) return await undo('timeout', { error: `timeout_ms (${item.constraints.timeout_ms}) passed during the tests` });
      if (t.code !== 0) return await undo('failure', { error: 'Tests failed' });
      // Tests may leave files behind (coverage, caches): they are not the step's output.
      await dropTestLeftovers(opts.root);
    }

    const changed = [...delta.modified, ...delta.created].sort();
    const artifactHashes = Object.fromEntries(changed.map((rel) => [rel, fileHash(opts.root, rel)]));
    if (changed.length || delta.deleted.length) await git([...COMMITTER, 'commit', '-q', '--no-verify', '-m', `${item.skill}: ${item.description.slice(0, 200)} (${item.id})`], { cwd: opts.root, what: 'commit' });
    const after = (await git(['rev-parse', 'HEAD'], { cwd: opts.root, what: 'rev-parse' })).trim();
    const afterHash = await stateHash(opts.root);
    const patch = await git(['diff', '--binary', '--no-renames', before, after], { cwd: opts.root, what: 'diff' });
    if (!fitsInReceipt(patch)) {
      await rollback(opts.root, before);
      return await undo('denied', { denial_reason: `Exceeded the receipt's patch size: ${patch.length} characters` });
    }
    const abs = (rel: string) => path.join(opts.root, rel);
    const res = result('success', { modified_files: delta.modified.map(abs), created_files: delta.created.map(abs), deleted_files: delta.deleted.map(abs), artifact_hashes: artifactHashes }, afterHash);
    const receipt: Receipt = {
      receipt_id: receiptId,
      version: 1,
      work_item: item,
      replay: isDeterministicSkill(item.skill) ? 'rerun' : 'patch',
      before_commit: before,
      after_commit: after,
      before_hash: beforeHash,
      after_hash: afterHash,
      artifact_hashes: artifactHashes,
      patch,
      patch_hash: patchHash(patch),
      metrics: res.metrics,
      created_at: new Date().toISOString(),
      ...(skill.blueprint ? { blueprint: skill.blueprint } : {}),
    };
    const { receiptPath, scriptPath } = writeReceipt(opts.receiptDir, receipt);
    res.receipt_path = receiptPath;
    res.proof_script = scriptPath;
    return { result: res, receipt, head: after, skill };
  } catch (err) {
    try {
      return await undo('failure', { error: err instanceof Error ? err.message : String(err) });
    } catch (again) {
      return { result: result('failure', { error: `${err instanceof Error ? err.message : String(err)}; and the rollback failed: ${again instanceof Error ? again.message : String(again)}` }, ''), receipt: null, head: before ?? '', skill };
    }
  }
}

/** Drops what the test command created besides the step's own changes (the staged delta stays). */
async function dropTestLeftovers(root: string): Promise<void> {
  await git(['checkout', '-q', '--', '.'], { cwd: root, what: 'checkout' });
  await git(['clean', '-q', '-f', '-d'], { cwd: root, what: 'clean' });
}

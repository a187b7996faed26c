import path from 'node:path';
import pLimit from 'p-limit';
import type { RunResult, WorkItem } from '../../protocol';
import { executeWorkItem, type ExecuteOptions, type WorkItemExecution } from './execute';
import { mergeStep } from './merge';
import { checkpoint, stateHash } from './state';

/**
 * One DAG level of a quest: its independent steps run at the same time, each in its own worktree
 * (and branch) made from the level's base (the quest tree's checkpoint), at most `parallel` at
 * once. When all have ended, the successful ones are merged into the quest tree in step id order;
 * a merge conflict fails that step — the merge is aborted and the quest tree reset, so nothing of
 * it is left — with the conflicting files and the steps merged before it named. The step
 * worktrees are removed whatever happened. A level of one step runs in the quest tree itself
 * (a merge of it would be a fast-forward).
 */

/** At most this many steps of one level run at once (each is a worktree, an agent or a DTA, and its tests). */
export const MAX_PARALLEL_WORK_ITEMS = 4;

export interface LevelItem {
  step_id: string;
  work_item: WorkItem;
}

export interface StepTree {
  path: string;
  /** Removes the worktree and its branch. */
  remove(): Promise<void>;
}

export interface LevelDeps {
  /** The quest's own tree (its branch is what the level merges into). */
  questRoot: string;
  /** A fresh worktree on a branch of its own at `base`, for one step. */
  makeTree(stepId: string, base: string): Promise<StepTree>;
  /** Everything executeWorkItem needs but the tree and the receipt folder. */
  options: Omit<ExecuteOptions, 'root' | 'receiptDir'>;
  receiptDir(stepId: string): string;
  parallel: number;
}

export interface LevelOutcome {
  step_id: string;
  execution: WorkItemExecution;
  /** When the step ran (for the record; nothing waits on these). */
  started_at: number;
  ended_at: number;
}

/** A RunResult's file paths point into the step's tree, which is gone after the merge: point them at the quest's. */
function rehome(result: RunResult, from: string, to: string): RunResult {
  const move = (files: string[]) => files.map((f) => (f.startsWith(from + path.sep) ? path.join(to, path.relative(from, f)) : f));
  return { ...result, modified_files: move(result.modified_files), created_files: move(result.created_files), deleted_files: move(result.deleted_files) };
}

function failed(execution: WorkItemExecution, error: string, outputHash: string, headNow: string): WorkItemExecution {
  const r = execution.result;
  return {
    ...execution,
    receipt: null,
    head: headNow,
    result: { ...r, status: 'failure', error, receipt_path: '', proof_script: undefined, output_hash: outputHash, modified_files: [], created_files: [], deleted_files: [], artifact_hashes: {} },
  };
}

function notRun(error: string, outputHash: string, headNow: string): WorkItemExecution {
  return {
    receipt: null,
    head: headNow,
    skill: null,
    result: { status: 'failure', receipt_id: '', receipt_path: '', modified_files: [], created_files: [], deleted_files: [], output_hash: outputHash, artifact_hashes: {}, metrics: { execution_time_ms: 0, tool_ops_count: 0, delta_size: 0, files_touched: 0 }, error },
  };
}

export async function runLevel(items: readonly LevelItem[], deps: LevelDeps): Promise<LevelOutcome[]> {
  const ordered = [...items].sort((a, b) => (a.step_id < b.step_id ? -1 : a.step_id > b.step_id ? 1 : 0));
  if (ordered.length === 1) {
    const it = ordered[0]!;
    const started = Date.now();
    const execution = await executeWorkItem(it.work_item, { ...deps.options, root: deps.questRoot, receiptDir: deps.receiptDir(it.step_id) });
    return [{ step_id: it.step_id, execution, started_at: started, ended_at: Date.now() }];
  }
  const base = await checkpoint(deps.questRoot, `checkpoint before a level of ${ordered.length} steps`);
  const baseHash = await stateHash(deps.questRoot);
  const limit = pLimit(Math.max(1, deps.parallel));
  const trees = new Map<string, StepTree>();
  try {
    const ran = await Promise.all(
      ordered.map((it) =>
        limit(async (): Promise<LevelOutcome> => {
          const started = Date.now();
          let tree: StepTree;
          try {
            tree = await deps.makeTree(it.step_id, base);
          } catch (err) {
            // This step never ran; the others go on (and nothing waits on a tree that is not there).
            return { step_id: it.step_id, execution: notRun(`could not make the step's worktree: ${err instanceof Error ? err.message : String(err)}`, baseHash, base), started_at: started, ended_at: Date.now() };
          }
          trees.set(it.step_id, tree);
          const execution = await executeWorkItem(it.work_item, { ...deps.options, root: tree.path, receiptDir: deps.receiptDir(it.step_id) });
          return { step_id: it.step_id, execution, started_at: started, ended_at: Date.now() };
        }),
      ),
    );
    // Merged in step id order, each onto what the ones before it made.
    const merged: string[] = [];
    const out: LevelOutcome[] = [];
    for (const o of ran) {
      const tree = trees.get(o.step_id);
      const ex = o.execution;
      if (ex.result.status !== 'success' || !tree) {
        out.push({ ...o, execution: { ...ex, head: base, result: tree ? rehome(ex.result, tree.path, deps.questRoot) : ex.result } });
        continue;
      }
      const m = await mergeStep(deps.questRoot, ex.head, `quest: merge ${o.step_id} (${ex.result.receipt_id})`);
      if (!m.ok) {
        const after = merged.length ? `the steps merged before it (${merged.join(', ')})` : 'the level base';
        const error = `Merge conflict with ${after} in ${m.files.join(', ') || 'the tree'}; the step was rolled back`;
        out.push({ ...o, execution: failed(ex, error, await stateHash(deps.questRoot), m.head) });
        continue;
      }
      merged.push(o.step_id);
      out.push({ ...o, execution: { ...ex, head: m.head, result: rehome(ex.result, tree.path, deps.questRoot) } });
    }
    return out;
  } finally {
    await Promise.all([...trees.values()].map((t) => t.remove().catch(() => undefined)));
  }
}

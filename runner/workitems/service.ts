import fs from 'node:fs';
import path from 'node:path';
import {
  fail,
  ok,
  parseInput,
  ReplayStepCommandSchema,
  RunWorkItemLevelCommandSchema,
  RunWorkItemWithAttemptSchema,
  type QuestDtaProposal,
  type QuestStepUpdate,
  type Result,
  type RunWorkItemLevelCommand,
} from '../../protocol';
import type { BlueprintCatalog } from '../blueprints/catalog';
import type { HookServer } from '../hooks';
import { errorMessage, type Logger } from '../log';
import type { SandboxSupport } from '../sandbox';
import { git } from '../workspace/git';
import { AGENT_BRANCH_PREFIX, type WorkspaceManager } from '../workspace/workspace-manager';
import type { WorkItemExecution } from './execute';
import { MAX_PARALLEL_WORK_ITEMS, runLevel } from './level';
import { replayReceipt } from './replay';
import { stepEnv, type AgentCommands, type SkillContext } from './skills';

/** A dry-run's patch travels to the gate's card up to this size (the full patch is in the DTA's artifacts). */
const MAX_PROPOSAL_PATCH_CHARS = 500_000;

export interface WorkItemServiceDeps {
  workspaces: WorkspaceManager;
  publish: (update: QuestStepUpdate) => void;
  log: Logger;
  dataDir: string;
  agentCommands: AgentCommands;
  canReach?: (source: string) => boolean;
  /** Agent and test commands run in it (runner/sandbox); absent: unsandboxed. */
  sandbox?: SandboxSupport;
  /** Real CLIs report their tool calls here (max_tool_ops). */
  hooks?: HookServer;
  blueprints?: BlueprintCatalog;
  /** The runner's capacity: a level runs at most min(this, MAX_PARALLEL_WORK_ITEMS) steps at once. */
  capacity?: number;
}

/**
 * Quest steps the control plane asks for (`workitem:run-level`, `workitem:run` = a level of one,
 * `workitem:replay`). A quest has one worktree on branch agent/<quest id>; a level's steps run in
 * worktrees of their own from it and are merged back in step id order (level.ts); the levels of
 * one quest run one after another. Outcomes go back on the runs' update channel (resent until
 * acked), since a step can take far longer than a command's ack may.
 */
export class WorkItemService {
  private readonly worktrees = new Map<string, string>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: WorkItemServiceDeps) {}

  run(raw: unknown): Result<{ accepted: true }> {
    const parsed = parseInput(RunWorkItemWithAttemptSchema, raw);
    if (!parsed.ok) return parsed;
    const { step_id, work_item, attempt, ...rest } = parsed.data;
    return this.accept({ ...rest, items: [{ step_id, work_item, attempt }] });
  }

  runLevel(raw: unknown): Result<{ accepted: true }> {
    const parsed = parseInput(RunWorkItemLevelCommandSchema, raw);
    if (!parsed.ok) return parsed;
    return this.accept(parsed.data);
  }

  private accept(cmd: RunWorkItemLevelCommand): Result<{ accepted: true }> {
    if (this.deps.canReach && !this.deps.canReach(cmd.repo_source)) return fail('FORBIDDEN', 'this runner cannot reach that repository');
    this.enqueue(cmd.quest_id, () => this.execute(cmd));
    return ok({ accepted: true });
  }

  replay(raw: unknown): Result<{ accepted: true }> {
    const parsed = parseInput(ReplayStepCommandSchema, raw);
    if (!parsed.ok) return parsed;
    const cmd = parsed.data;
    if (this.deps.canReach && !this.deps.canReach(cmd.repo_source)) return fail('FORBIDDEN', 'this runner cannot reach that repository');
    void (async () => {
      let replay;
      try {
        // The receipt's commits live in the runner's clone (every worktree shares its objects).
        const bare = await this.deps.workspaces.ensureClone(cmd.repo_id, cmd.repo_source);
        replay = await replayReceipt(cmd.receipt, bare, this.skillOptions());
      } catch (err) {
        replay = { verified: false, replay: cmd.receipt.replay, expected_hash: cmd.receipt.after_hash, actual_hash: null, detail: `replay failed: ${errorMessage(err)}` };
      }
      this.deps.publish({ type: 'QUEST_STEP', quest_id: cmd.quest_id, step_id: cmd.step_id, ts: Date.now(), outcome: { kind: 'replayed', replay } });
    })();
    return ok({ accepted: true });
  }

  private enqueue(questId: string, job: () => Promise<void>): void {
    const prev = this.queues.get(questId) ?? Promise.resolve();
    const next = prev.then(job, job).finally(() => {
      if (this.queues.get(questId) === next) this.queues.delete(questId);
    });
    this.queues.set(questId, next);
  }

  /** What every step and replay gets besides its tree: never the runner's own environment. */
  private skillOptions(): Omit<SkillContext, 'root' | 'deadline'> {
    const home = path.join(this.deps.dataDir, 'quest-home');
    const homesDir = path.join(this.deps.dataDir, 'quest-homes');
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(homesDir, { recursive: true });
    const { agentCommands, sandbox, hooks, blueprints } = this.deps;
    return { agentCommands, env: stepEnv(home), homesDir, ...(sandbox ? { sandbox } : {}), ...(hooks ? { hooks } : {}), ...(blueprints ? { blueprints } : {}) };
  }

  private async worktreeOf(cmd: RunWorkItemLevelCommand): Promise<string> {
    const known = this.worktrees.get(cmd.quest_id);
    if (known && fs.existsSync(known)) return known;
    const wt = await this.deps.workspaces.prepareWorktree({ session_id: cmd.quest_id, repo_id: cmd.repo_id, source: cmd.repo_source, checkout: { type: 'branch', ref: cmd.base_ref }, mode: 'write' });
    this.worktrees.set(cmd.quest_id, wt.path);
    return wt.path;
  }

  private update(cmd: RunWorkItemLevelCommand, item: RunWorkItemLevelCommand['items'][number], out: WorkItemExecution): QuestStepUpdate {
    const d = out.skill?.dta;
    const dta: QuestDtaProposal | null = d ? { patch_sha256: d.patch_sha256, files: d.files, proposed_changes: d.proposed_changes, patch: (out.skill?.patch ?? '').slice(0, MAX_PROPOSAL_PATCH_CHARS) } : null;
    return { type: 'QUEST_STEP', quest_id: cmd.quest_id, step_id: item.step_id, ts: Date.now(), outcome: { kind: 'ran', attempt: item.attempt, result: out.result, receipt: out.receipt, head: out.head, dta } };
  }

  private async execute(cmd: RunWorkItemLevelCommand): Promise<void> {
    let updates: QuestStepUpdate[];
    try {
      const questRoot = await this.worktreeOf(cmd);
      const attempts = new Map(cmd.items.map((i) => [i.step_id, i]));
      const outcomes = await runLevel(cmd.items, {
        questRoot,
        parallel: Math.min(MAX_PARALLEL_WORK_ITEMS, Math.max(1, this.deps.capacity ?? MAX_PARALLEL_WORK_ITEMS)),
        options: this.skillOptions(),
        receiptDir: (step) => path.join(this.deps.dataDir, 'receipts', cmd.quest_id, `${step}-${attempts.get(step)!.attempt}`),
        makeTree: async (step, base) => {
          // Its own worktree and branch (agent/<quest>--<step>) at the level's base; both go after the merge.
          const id = `${cmd.quest_id}--${step}`;
          const wt = await this.deps.workspaces.prepareWorktree({ session_id: id, repo_id: cmd.repo_id, source: cmd.repo_source, checkout: { type: 'commit', ref: base }, mode: 'write' });
          return {
            path: wt.path,
            remove: async () => {
              await this.deps.workspaces.removeWorktree(id);
              await git(['branch', '-q', '-D', `${AGENT_BRANCH_PREFIX}${id}`], { cwd: questRoot, what: 'branch -D' }).catch((err) => this.deps.log.warn(errorMessage(err)));
            },
          };
        },
      });
      updates = outcomes.map((o) => this.update(cmd, attempts.get(o.step_id)!, o.execution));
    } catch (err) {
      this.deps.log.warn(`quest ${cmd.quest_id}: a level of ${cmd.items.length} step(s) failed before it ran: ${errorMessage(err)}`);
      updates = cmd.items.map((item) => ({
        type: 'QUEST_STEP' as const,
        quest_id: cmd.quest_id,
        step_id: item.step_id,
        ts: Date.now(),
        outcome: {
          kind: 'ran' as const,
          attempt: item.attempt,
          receipt: null,
          head: '',
          dta: null,
          result: { status: 'failure' as const, receipt_id: '', receipt_path: '', modified_files: [], created_files: [], deleted_files: [], output_hash: '', artifact_hashes: {}, metrics: { execution_time_ms: 0, tool_ops_count: 0, delta_size: 0, files_touched: 0 }, error: errorMessage(err).slice(0, 4000) },
        },
      }));
    }
    for (const u of updates) this.deps.publish(u);
  }

  /** The quest is over: its worktree goes (the branch and its commits stay in the clone). */
  async close(questId: string): Promise<void> {
    this.worktrees.delete(questId);
    await this.deps.workspaces.removeWorktree(questId);
  }
}

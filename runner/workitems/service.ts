import fs from 'node:fs';
import path from 'node:path';
import {
  fail,
  ok,
  parseInput,
  ReplayStepCommandSchema,
  RunWorkItemWithAttemptSchema,
  type QuestDtaProposal,
  type QuestStepUpdate,
  type Result,
  type RunWorkItemWithAttempt,
} from '../../protocol';
import { errorMessage, type Logger } from '../log';
import type { WorkspaceManager } from '../workspace/workspace-manager';
import { executeWorkItem } from './execute';
import { replayReceipt } from './replay';
import { stepEnv, type AgentCommands } from './skills';

/** A dry-run's patch travels to the gate's card up to this size (the full patch is in the DTA's artifacts). */
const MAX_PROPOSAL_PATCH_CHARS = 500_000;

/**
 * Quest steps the control plane asks for (`workitem:run`, `workitem:replay`). A quest has one
 * worktree on branch agent/<quest id>, kept across its steps; steps of one quest run one at a
 * time there. Outcomes go back on the runs' update channel (resent until acked), since a step
 * can take far longer than a command's ack may.
 */
export class WorkItemService {
  private readonly worktrees = new Map<string, string>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly deps: {
      workspaces: WorkspaceManager;
      publish: (update: QuestStepUpdate) => void;
      log: Logger;
      dataDir: string;
      agentCommands: AgentCommands;
      canReach?: (source: string) => boolean;
    },
  ) {}

  run(raw: unknown): Result<{ accepted: true }> {
    const parsed = parseInput(RunWorkItemWithAttemptSchema, raw);
    if (!parsed.ok) return parsed;
    const cmd = parsed.data;
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
        replay = await replayReceipt(cmd.receipt, bare, { agentCommands: this.deps.agentCommands, env: this.env() });
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

  private env(): NodeJS.ProcessEnv {
    const home = path.join(this.deps.dataDir, 'quest-home');
    fs.mkdirSync(home, { recursive: true });
    return stepEnv(home);
  }

  private async worktreeOf(cmd: RunWorkItemWithAttempt): Promise<string> {
    const known = this.worktrees.get(cmd.quest_id);
    if (known && fs.existsSync(known)) return known;
    const wt = await this.deps.workspaces.prepareWorktree({ session_id: cmd.quest_id, repo_id: cmd.repo_id, source: cmd.repo_source, checkout: { type: 'branch', ref: cmd.base_ref }, mode: 'write' });
    this.worktrees.set(cmd.quest_id, wt.path);
    return wt.path;
  }

  private async execute(cmd: RunWorkItemWithAttempt): Promise<void> {
    let update: QuestStepUpdate;
    try {
      const root = await this.worktreeOf(cmd);
      const receiptDir = path.join(this.deps.dataDir, 'receipts', cmd.quest_id, `${cmd.step_id}-${cmd.attempt}`);
      const out = await executeWorkItem(cmd.work_item, { root, receiptDir, agentCommands: this.deps.agentCommands, env: this.env() });
      const d = out.skill?.dta;
      const dta: QuestDtaProposal | null = d ? { patch_sha256: d.patch_sha256, files: d.files, proposed_changes: d.proposed_changes, patch: (out.skill?.patch ?? '').slice(0, MAX_PROPOSAL_PATCH_CHARS) } : null;
      update = { type: 'QUEST_STEP', quest_id: cmd.quest_id, step_id: cmd.step_id, ts: Date.now(), outcome: { kind: 'ran', attempt: cmd.attempt, result: out.result, receipt: out.receipt, head: out.head, dta } };
    } catch (err) {
      this.deps.log.warn(`quest ${cmd.quest_id} step ${cmd.step_id} failed before it ran: ${errorMessage(err)}`);
      update = {
        type: 'QUEST_STEP',
        quest_id: cmd.quest_id,
        step_id: cmd.step_id,
        ts: Date.now(),
        outcome: {
          kind: 'ran',
          attempt: cmd.attempt,
          receipt: null,
          head: '',
          dta: null,
          result: { status: 'failure', receipt_id: '', receipt_path: '', modified_files: [], created_files: [], deleted_files: [], output_hash: '', artifact_hashes: {}, metrics: { execution_time_ms: 0, tool_ops_count: 0, delta_size: 0, files_touched: 0 }, error: errorMessage(err).slice(0, 4000) },
        },
      };
    }
    this.deps.publish(update);
  }

  /** The quest is over: its worktree goes (the branch and its commits stay in the clone). */
  async close(questId: string): Promise<void> {
    this.worktrees.delete(questId);
    await this.deps.workspaces.removeWorktree(questId);
  }
}

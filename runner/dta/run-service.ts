import {
  DecideDtaCommandSchema,
  DtaInvocationSchema,
  fail,
  MAX_EVENT_PATCH_CHARS,
  ok,
  parseInput,
  StartDtaCommandSchema,
  dtaPassed,
  type DtaEvent,
  type DtaOutput,
  type DtaRunUpdate,
  type Result,
  type StartDtaCommand,
} from '../../protocol';
import { errorMessage, type Logger } from '../log';
import { git } from '../workspace/git';
import type { WorkspaceManager } from '../workspace/workspace-manager';
import { readArtifacts } from './artifacts';
import { runDta } from './engine';
import { forgetProposals } from './kept-proposals';
import { DEFAULT_POLICY } from './policy';
import { ensureVerifierBundle } from './verifier/bundle';

/**
 * DTA runs the control plane asks for (`dta:start`, `dta:decide`): each in a fresh worktree on
 * branch `dta/<run id>`. The dry-run's proposal goes back as dta_proposed and the run waits; the
 * control plane answers after its gate (an approval card) and its soft lock. Allow → apply →
 * verify → commit on the branch; deny → nothing is applied. Progress travels on the runs' update
 * channel, resent until acked.
 */
export const DTA_BRANCH_PREFIX = 'dta/';
/** Who the DTA commits are by (the runner's git may have no identity configured). */
const COMMITTER = ['-c', 'user.name=Agent Village DTA', '-c', 'user.email=dta@agent-village.invalid'];

interface Pending {
  cmd: StartDtaCommand;
  worktree: string;
  patchSha256: string;
}

export class DtaRunService {
  private readonly pending = new Map<string, Pending>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly deps: {
      workspaces: WorkspaceManager;
      publish: (update: DtaRunUpdate) => void;
      log: Logger;
      canReach?: (source: string) => boolean;
    },
  ) {
    // The runner's first DTA run finds the verifier's prebuilt entry ready (built in the background if missing or stale).
    void ensureVerifierBundle();
  }

  start(raw: unknown): Result<{ run_id: string }> {
    const parsed = parseInput(StartDtaCommandSchema, raw);
    if (!parsed.ok) return parsed;
    const cmd = parsed.data;
    if (this.deps.canReach && !this.deps.canReach(cmd.repo_source)) return fail('FORBIDDEN', 'this runner cannot reach that repository');
    if (this.busy.has(cmd.run_id) || this.pending.has(cmd.run_id)) return fail('CONFLICT', `DTA run ${cmd.run_id} is already here`);
    this.busy.add(cmd.run_id);
    void this.dryRun(cmd).finally(() => this.busy.delete(cmd.run_id));
    return ok({ run_id: cmd.run_id });
  }

  decide(raw: unknown): Result<null> {
    const parsed = parseInput(DecideDtaCommandSchema, raw);
    if (!parsed.ok) return parsed;
    const d = parsed.data;
    const p = this.pending.get(d.run_id);
    if (!p) return fail('NOT_FOUND', `no DTA run ${d.run_id} waiting for a decision here`);
    if (p.patchSha256 !== d.patch_sha256) return fail('CONFLICT', 'that decision is for another patch');
    this.pending.delete(d.run_id);
    this.busy.add(d.run_id);
    const work = d.decision === 'allow' ? this.apply(p) : this.deny(p, d.decided_by);
    void work.finally(() => this.busy.delete(d.run_id));
    return ok(null);
  }

  private emit(cmd: StartDtaCommand, event: DistributiveOmit<DtaEvent, 'run_id' | 'tool' | 'ts'>): void {
    const ts = Date.now();
    this.deps.publish({ type: 'DTA_EVENT', run_id: cmd.run_id, ts, event: { ...event, run_id: cmd.run_id, tool: cmd.invocation.tool, ts } as DtaEvent });
  }

  private invocation(cmd: StartDtaCommand, worktree: string, mode: 'dry-run' | 'apply', expected?: string) {
    return DtaInvocationSchema.parse({
      tool: cmd.invocation.tool,
      version: '1.0',
      mode,
      target: { repo_path: worktree, ...(cmd.invocation.glob ? { glob: cmd.invocation.glob } : {}) },
      params: cmd.invocation.params,
      constraints: cmd.invocation.constraints ?? {},
      ...(expected ? { expected_patch_sha256: expected } : {}),
    });
  }

  private async dryRun(cmd: StartDtaCommand): Promise<void> {
    let worktree: string | null = null;
    try {
      const wt = await this.deps.workspaces.prepareWorktree({ session_id: cmd.run_id, repo_id: cmd.repo_id, source: cmd.repo_source, checkout: { type: 'branch', ref: cmd.base_ref }, mode: 'write' });
      worktree = wt.path;
      const branch = `${DTA_BRANCH_PREFIX}${cmd.run_id}`;
      await git(['branch', '-m', branch], { cwd: worktree, what: 'branch' });
      this.emit(cmd, { type: 'dta_started', branch, files: [], base_commit: wt.sha });
      let patch = '';
      const out = await runDta(this.invocation(cmd, worktree, 'dry-run'), { runId: cmd.run_id, policy: DEFAULT_POLICY, stageForApply: true, onPhase: (phase, _o, extra) => phase === 'proposed' && (patch = extra.patch ?? '') });
      if (!out.ok || !out.patch_sha256) return this.failed(cmd, worktree, out.error?.message ?? 'the dry-run failed', out);
      this.pending.set(cmd.run_id, { cmd, worktree, patchSha256: out.patch_sha256 });
      this.emit(cmd, { type: 'dta_proposed', output: out, patch: patch.slice(0, MAX_EVENT_PATCH_CHARS), artifacts: readArtifacts(worktree, out.artifacts) });
    } catch (err) {
      await this.failed(cmd, worktree, errorMessage(err), null);
    }
  }

  private async apply(p: Pending): Promise<void> {
    const { cmd, worktree } = p;
    try {
      const out = await runDta(this.invocation(cmd, worktree, 'apply', p.patchSha256), {
        runId: cmd.run_id,
        policy: DEFAULT_POLICY,
        onPhase: (phase, o) => phase === 'applied' && this.emit(cmd, { type: 'dta_applied', output: structuredClone(o) }),
      });
      if (!dtaPassed(out)) {
        const why = out.error?.message ?? `verification failed: ${out.verifier.failures.join('; ')}`;
        return this.failed(cmd, worktree, why, out);
      }
      let commit: string | null = null;
      if (out.files.length > 0) {
        await git(['add', '--', ...out.files], { cwd: worktree, what: 'add' });
        await git([...COMMITTER, 'commit', '-q', '-m', `${cmd.invocation.tool}: ${JSON.stringify(out.applied_changes)} (DTA run ${cmd.run_id}, verified)`], { cwd: worktree, what: 'commit' });
        commit = (await git(['rev-parse', 'HEAD'], { cwd: worktree, what: 'rev-parse' })).trim();
      }
      this.emit(cmd, { type: 'dta_verified', output: out, commit_sha: commit, artifacts: readArtifacts(worktree, out.artifacts) });
      await this.deps.workspaces.removeWorktree(cmd.run_id);
    } catch (err) {
      await this.failed(cmd, worktree, errorMessage(err), null);
    }
  }

  private async deny(p: Pending, by: string): Promise<void> {
    forgetProposals(p.worktree);
    this.emit(p.cmd, { type: 'dta_failed', reason: `denied by ${by || 'an approver'}: nothing was applied`, output: null });
    await this.deps.workspaces.removeWorktree(p.cmd.run_id);
  }

  private async failed(cmd: StartDtaCommand, worktree: string | null, reason: string, out: DtaOutput | null): Promise<void> {
    this.deps.log.warn(`DTA run ${cmd.run_id} failed: ${reason}`);
    this.emit(cmd, { type: 'dta_failed', reason: reason.slice(0, 4000), output: out, ...(worktree && out ? { artifacts: readArtifacts(worktree, out.artifacts) } : {}) });
    if (worktree) await this.deps.workspaces.removeWorktree(cmd.run_id).catch(() => undefined);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

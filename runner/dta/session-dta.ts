import path from 'node:path';
import { z } from 'zod';
import { dtaPassed, DtaInvocationSchema, MAX_EVENT_PATCH_CHARS, type DtaEvent, type DtaOutput, type RunnerEventBody } from '../../protocol';
import type { ApprovalAsk, ApprovalDecision } from '../approvals/broker';
import type { HookCall, HookReply } from '../hooks/hook-server';
import { git } from '../workspace/git';
import { runDta } from './engine';
import { forgetProposals } from './kept-proposals';
import { loadPolicy } from './policy';
import type { StrictWatch } from './strict-watch';

/**
 * av-dta inside a session, through the hook channel: the runner (not the agent's process) runs
 * the DTA against the session's own worktree and puts its dta_* events into the session's stream.
 * A repo_path outside the worktree is refused.
 */
const SessionDtaPayload = z.object({ invocation: z.unknown(), cwd: z.string().min(1).max(4096) });

export interface SessionDtaContext {
  worktree: string;
  emit: (body: RunnerEventBody) => void;
  /** The session's approval broker: an apply waits here for a person after its dry-run (the gate). */
  ask?: (req: ApprovalAsk) => Promise<ApprovalDecision>;
  /** Strict tools: this run's own writes are the DTA's, not a hand edit to revert. */
  strict?: StrictWatch | null;
}

/** Patch text on the approval card (the protocol's diff_stat limit). */
const CARD_PATCH_CHARS = 20_000;

export async function runSessionDta(call: HookCall, ctx: SessionDtaContext): Promise<HookReply> {
  const p = SessionDtaPayload.safeParse(call.payload);
  if (call.event !== 'run' || !p.success) return reply({ ok: false, error: { code: 'BAD_INVOCATION', message: 'malformed av-dta call' } });
  const inv = DtaInvocationSchema.safeParse(p.data.invocation);
  if (inv.success) {
    const target = path.resolve(p.data.cwd, inv.data.target.repo_path);
    const rel = path.relative(ctx.worktree, target);
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      return reply({ ok: false, error: { code: 'POLICY', message: `target.repo_path ${inv.data.target.repo_path} is outside this session's worktree` } });
    }
    inv.data.target.repo_path = target;
  }
  const emit = (event: DtaEvent) => ctx.emit({ type: 'DTA_EVENT', event });
  if (inv.success && inv.data.mode === 'apply' && ctx.ask && !inv.data.expected_patch_sha256) {
    // The gate: dry-run first, the patch becomes an approval card, and only an Allow applies it —
    // bound to that patch (expected_patch_sha256), so a tree that changed meanwhile applies nothing.
    let patch = '';
    const dry = await runDta({ ...inv.data, mode: 'dry-run' }, { policy: loadPolicy(), stageForApply: true, onPhase: (ph, _o, extra) => ph === 'proposed' && (patch = extra.patch ?? '') });
    if (!dry.ok || !dry.patch_sha256) return reply(dry);
    const counts = Object.entries(dry.proposed_changes).map(([k, v]) => `${v} ${k}`).join(', ');
    const d = await ctx.ask({
      category: 'dta',
      summary: `${dry.tool}: ${counts} — apply in this session's worktree?`,
      risk: 'medium',
      argv: ['av-dta', 'apply', dry.tool, dry.patch_sha256],
      cwd: ctx.worktree,
      context: { command: `av-dta apply ${dry.tool}`, rule: 'DTA gate: dry-run → approval → apply', source: 'dta', changed_files: dry.files.length, diff_stat: patch.slice(0, CARD_PATCH_CHARS) },
    });
    if (d.decision !== 'allow') {
      // Its kept verifier and staged contents go now, not at the 15-minute expiry.
      forgetProposals(inv.data.target.repo_path);
      return reply({ ...dry, ok: false, error: { code: 'POLICY', message: `apply denied${d.decided_by ? ` by ${d.decided_by}` : ''}${d.note ? `: ${d.note}` : ''} (${d.reason}); nothing was applied` } });
    }
    inv.data.expected_patch_sha256 = dry.patch_sha256;
  }
  const branch = await git(['symbolic-ref', '--short', '-q', 'HEAD'], { cwd: ctx.worktree }).then((b) => b.trim(), () => '');
  const run = () => runDta(inv.success ? inv.data : p.data.invocation, {
    policy: loadPolicy(),
    onPhase: (phase, o, extra) => {
      const base = { run_id: o.run_id, tool: o.tool as DtaEvent['tool'], ts: Date.now() };
      if (phase === 'started') emit({ ...base, type: 'dta_started', branch, files: (extra.files ?? []).slice(0, 5000) });
      else if (phase === 'proposed') emit({ ...base, type: 'dta_proposed', output: structuredClone(o), patch: (extra.patch ?? '').slice(0, MAX_EVENT_PATCH_CHARS) });
      else if (phase === 'applied') emit({ ...base, type: 'dta_applied', output: structuredClone(o) });
    },
  });
  const out: DtaOutput = ctx.strict && inv.success ? await ctx.strict.runningDta(inv.data.target.repo_path, run) : await run();
  const base = { run_id: out.run_id, tool: out.tool as DtaEvent['tool'], ts: Date.now() };
  if (out.phase === 'verify' && dtaPassed(out)) emit({ ...base, type: 'dta_verified', output: out, commit_sha: null });
  else if (!out.ok || (out.phase === 'verify' && !out.verifier.passed)) {
    if (/^dta_/.test(out.run_id) && out.tool !== 'unknown') emit({ ...base, type: 'dta_failed', reason: out.error?.message ?? `verification failed: ${out.verifier.failures.join('; ')}`, output: out });
  }
  return reply(out);
}

function reply(body: unknown): HookReply {
  return { stdout: JSON.stringify(body) };
}

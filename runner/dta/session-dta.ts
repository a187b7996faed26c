import path from 'node:path';
import { z } from 'zod';
import { dtaPassed, DtaInvocationSchema, MAX_EVENT_PATCH_CHARS, type DtaEvent, type DtaOutput, type RunnerEventBody } from '../../protocol';
import type { HookCall, HookReply } from '../hooks/hook-server';
import { git } from '../workspace/git';
import { runDta } from './engine';
import { loadPolicy } from './policy';

/**
 * av-dta inside a session, through the hook channel: the runner (not the agent's process) runs
 * the DTA against the session's own worktree and puts its dta_* events into the session's stream.
 * A repo_path outside the worktree is refused.
 */
const SessionDtaPayload = z.object({ invocation: z.unknown(), cwd: z.string().min(1).max(4096) });

export async function runSessionDta(call: HookCall, ctx: { worktree: string; emit: (body: RunnerEventBody) => void }): Promise<HookReply> {
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
  const branch = await git(['symbolic-ref', '--short', '-q', 'HEAD'], { cwd: ctx.worktree }).then((b) => b.trim(), () => '');
  const out: DtaOutput = await runDta(inv.success ? inv.data : p.data.invocation, {
    policy: loadPolicy(),
    onPhase: (phase, o, extra) => {
      const base = { run_id: o.run_id, tool: o.tool as DtaEvent['tool'], ts: Date.now() };
      if (phase === 'started') emit({ ...base, type: 'dta_started', branch, files: (extra.files ?? []).slice(0, 5000) });
      else if (phase === 'proposed') emit({ ...base, type: 'dta_proposed', output: structuredClone(o), patch: (extra.patch ?? '').slice(0, MAX_EVENT_PATCH_CHARS) });
      else if (phase === 'applied') emit({ ...base, type: 'dta_applied', output: structuredClone(o) });
    },
  });
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

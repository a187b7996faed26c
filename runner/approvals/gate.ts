import { z } from 'zod';
import type { RunnerEventBody } from '../../protocol';
import type { HookCall, HookReply } from '../hooks/hook-server';
import {
  asks,
  blockedBy,
  blockedCommandLine,
  classifyArgv,
  classifyCommandLine,
  needsAsking,
  SECRET_HELPER,
  type Classification,
  type EffectivePolicy,
} from '../policy/classify';
import { git } from '../workspace/git';
import { commandHash, displayCommand, type ApprovalBroker, type ApprovalDecision } from './broker';
import { measureAction } from './measure-action';
import { WIRE_LIMITS } from '../../protocol';

/**
 * The runner's side of every policy check inside a session: the guard shims' calls (exec of a
 * wrapped program, the secrets helper, the shell's refusals) and the provider hooks' tool calls.
 * All of them classify with runner/policy/classify.ts and wait on the one ApprovalBroker.
 */

/** A command the provider hook approved is not asked again by the shim when it runs within this (same argv and cwd, once). */
export const PREAPPROVED_TTL_MS = 60_000;
/** git calls for the approval context; a huge repository must not hold the request up. */
const CONTEXT_GIT_TIMEOUT_MS = 5_000;

const ExecPayload = z.object({ argv: z.array(z.string().max(100_000)).min(1).max(10_000), cwd: z.string().min(1).max(4096) });
const BlockedPayload = z.object({ rule: z.string().max(500), line: z.string().max(100_000), cwd: z.string().max(4096).optional() });

export interface GateDeps {
  policy: EffectivePolicy;
  broker: ApprovalBroker;
  emit(body: RunnerEventBody): void;
  /** The org's secrets for av-secret (name → value); values never go into events. */
  secrets: Record<string, string>;
}

export type ToolDecision = { decision: 'allow' | 'deny'; reason: string };

export class PolicyGate {
  private readonly preapproved = new Map<string, number>();

  constructor(private readonly deps: GateDeps) {}

  /** A call from av-guard.mjs; the reply's stdout is the guard's JSON instruction. */
  async guardCall(call: HookCall): Promise<HookReply> {
    if (call.event === 'blocked') {
      const p = BlockedPayload.safeParse(call.payload);
      // The shell already refused; the runner checks the claim before recording it.
      const hit = p.success ? blockedCommandLine(p.data.line, this.deps.policy) : null;
      if (p.success && hit) this.blocked(p.data.line, hit.rule, 'refused by the session shell before it ran');
      return {};
    }
    if (call.event !== 'exec') return reply({ action: 'deny', message: 'agent-village: unknown guard call; refused' });
    const p = ExecPayload.safeParse(call.payload);
    if (!p.success) return reply({ action: 'deny', message: 'agent-village: malformed guard call; refused' });
    const { argv, cwd } = p.data;
    const command = displayCommand(argv);
    const rule = blockedBy(argv, this.deps.policy);
    if (rule) {
      this.blocked(command, rule, 'refused by the guard before it ran');
      return reply({ action: 'deny', message: `agent-village: blocked by policy: ${rule}` });
    }
    if (argv[0] === SECRET_HELPER) return this.secret(argv, cwd);
    const current = argv[0] === 'git' ? await currentBranch(cwd) : null;
    const c = classifyArgv(argv, this.deps.policy, current);
    if (!c || !needsAsking(this.deps.policy, c)) return reply({ action: 'run' });
    if (this.takePreapproved(argv, cwd)) return reply({ action: 'run' });
    const d = await this.ask(c, argv, cwd, command, 'shim', current);
    return d.decision === 'allow' ? reply({ action: 'run' }) : reply({ action: 'deny', message: refusal(c, d) });
  }

  /**
   * A provider's PreToolUse/BeforeTool for a shell tool: null when nothing in it needs a
   * decision (the hook answers its usual allow), else the broker's answer.
   */
  async toolCall(line: string, cwd: string | undefined): Promise<ToolDecision | null> {
    const hit = blockedCommandLine(line, this.deps.policy);
    if (hit) {
      this.blocked(line, hit.rule, 'refused at the provider hook before the tool ran');
      return { decision: 'deny', reason: `agent-village: blocked by policy: ${hit.rule}` };
    }
    const where = cwd ?? process.cwd();
    const current = await currentBranch(where);
    const found = classifyCommandLine(line, this.deps.policy, current);
    if (!found || !needsAsking(this.deps.policy, found.classification)) return null;
    const d = await this.ask(found.classification, ['bash', '-c', line], where, line, 'hook', current, found.argv);
    if (d.decision !== 'allow') return { decision: 'deny', reason: refusal(found.classification, d) };
    // The shim inside the tool will see exactly this argv; it is not asked twice.
    this.preapproved.set(commandHash(found.argv, where), Date.now() + PREAPPROVED_TTL_MS);
    return { decision: 'allow', reason: `approved by ${d.decided_by ?? 'a person'}${d.note ? `: ${d.note}` : ''}` };
  }

  private takePreapproved(argv: string[], cwd: string): boolean {
    const key = commandHash(argv, cwd);
    const until = this.preapproved.get(key);
    this.preapproved.delete(key);
    for (const [k, t] of this.preapproved) if (t < Date.now()) this.preapproved.delete(k);
    return until !== undefined && until >= Date.now();
  }

  private async secret(argv: string[], cwd: string): Promise<HookReply> {
    const name = argv[1];
    if (!name || !Object.hasOwn(this.deps.secrets, name)) {
      return reply({ action: 'deny', message: `agent-village: no org secret named ${name ?? '(none given)'} in this session` });
    }
    const c = classifyArgv(argv, this.deps.policy);
    if (c && asks(this.deps.policy, 'secrets')) {
      const d = await this.ask(c, argv, cwd, displayCommand(argv), 'shim', null);
      if (d.decision !== 'allow') return reply({ action: 'deny', message: refusal(c, d) });
    }
    // `av-secret NAME -- cmd args`: the value goes only into that command's environment (the
    // approval named the command); without `--` it is printed, as before.
    if (argv[2] === '--' && argv.length > 3) return reply({ action: 'exec_with_env', name, value: this.deps.secrets[name], argv: argv.slice(3) });
    return reply({ action: 'print', text: `${this.deps.secrets[name]}\n` });
  }

  /** `measured`: the simple command the classification is about (a hook's line may hold several). */
  private async ask(c: Classification, argv: string[], cwd: string, command: string, source: 'shim' | 'hook', branch: string | null, measured = argv): Promise<ApprovalDecision> {
    const extra = await measureAction(c, measured, cwd, branch);
    return this.deps.broker.ask({
      category: c.category,
      summary: c.summary,
      risk: c.risk,
      argv,
      cwd,
      context: {
        command,
        rule: c.rule,
        source,
        ...(branch ? { branch } : {}),
        ...(c.target_branch ? { target_branch: c.target_branch } : {}),
        ...extra,
      },
    });
  }

  private blocked(command: string, rule: string, detail: string): void {
    this.deps.emit({ type: 'POLICY_BLOCKED', command: command.slice(0, WIRE_LIMITS.POLICY_COMMAND), rule: rule.slice(0, WIRE_LIMITS.RULE), detail, outcome: 'prevented' });
  }
}

function reply(body: Record<string, unknown>): HookReply {
  return { stdout: JSON.stringify(body) };
}

/** "agent-village: merge into main denied by ann: not today" — what the agent sees. */
export function refusal(c: Classification, d: ApprovalDecision): string {
  const what = c.category === 'merge' ? `merge into ${c.target_branch ?? 'a protected branch'}` : c.category === 'deps_add' ? `dependency addition (${c.summary})` : c.category === 'secrets' ? c.summary : `deploy (${c.summary})`;
  const why =
    d.reason === 'expired'
      ? ': nobody answered in time (expired)'
      : d.reason === 'session_ended'
        ? ': the session ended while waiting'
        : d.reason === 'runner_restarted'
          ? ': the runner restarted while waiting'
          : ` by ${d.decided_by || 'an approver'}${d.note ? `: ${d.note}` : ''}`;
  return `agent-village: ${what} denied${why}`;
}

async function currentBranch(cwd: string): Promise<string | null> {
  try {
    return (await git(['symbolic-ref', '--short', '-q', 'HEAD'], { cwd, what: 'symbolic-ref', timeoutMs: CONTEXT_GIT_TIMEOUT_MS })).trim() || null;
  } catch {
    return null;
  }
}

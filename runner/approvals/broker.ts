import crypto from 'node:crypto';
import { fail, ok, type ApprovalContext, type BlastRadius, type Result, type RunnerEventBody, WIRE_LIMITS } from '../../protocol';
import type { ApprovalCategory } from '../policy/classify';
import type { ApprovalJournal } from './journal';

/**
 * One session's blocking "ask" path (ARCHITECTURE.md §8). Every mechanism — the guard shims, the
 * provider PreToolUse/BeforeTool hooks, the secrets helper — calls ask() and waits; the action
 * runs only on 'allow'. A decision binds to one request by approval_id AND command_hash; anything
 * else (a replay, a duplicate, a decision for another command) is refused and changes nothing.
 * Whatever goes wrong while waiting ends in 'deny': expiry, the session ending, a runner restart
 * (the journal remembers what was pending so the next start can say so).
 */

export type ResolveReason = 'decided' | 'expired' | 'runner_restarted' | 'session_ended';

export interface ApprovalDecision {
  decision: 'allow' | 'deny';
  note?: string;
  decided_by?: string;
  reason: ResolveReason;
}

export interface ApprovalAsk {
  /** 'dta': the gate between an agent's DTA dry-run and its apply (runner/dta/session-dta.ts). */
  category: ApprovalCategory | 'dta';
  summary: string;
  risk: 'low' | 'medium' | 'high';
  /** The exact command and where it runs: the hash binds the decision to them. */
  argv: string[];
  cwd: string;
  context: { command?: string; rule: string; source: ApprovalContext['source']; branch?: string; target_branch?: string; changed_files?: number; diff_stat?: string; range?: string; blast_radius?: BlastRadius };
}

export interface BrokerSink {
  emit(body: RunnerEventBody): void;
  /** true when the first approval starts waiting, false when none is left. */
  waiting(waiting: boolean): void;
}

export interface DecideInput {
  approval_id: string;
  command_hash: string;
  decision: 'allow' | 'deny';
  note?: string;
  decided_by: string;
}

/** sha256 of the exact argv (JSON) and cwd: what the approver saw is what runs. */
export function commandHash(argv: string[], cwd: string): string {
  return crypto.createHash('sha256').update(JSON.stringify({ argv, cwd })).digest('hex');
}

/** Protocol limits (events.ts). */
const MAX_COMMAND = 8000;
const MAX_NOTE = 2000;

/** Display form of argv: words with spaces or quotes are single-quoted. */
export function displayCommand(argv: string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

interface Pending {
  hash: string;
  timer: NodeJS.Timeout;
  resolve: (d: ApprovalDecision) => void;
}

export class ApprovalBroker {
  private readonly pending = new Map<string, Pending>();
  private closed = false;

  constructor(
    private readonly sessionId: string,
    private readonly sink: BrokerSink,
    private readonly timeoutMs: number,
    private readonly journal: ApprovalJournal | null = null,
  ) {}

  get pendingCount(): number {
    return this.pending.size;
  }

  /** The ids waiting now (tests, diagnostics). */
  pendingIds(): string[] {
    return [...this.pending.keys()];
  }

  ask(req: ApprovalAsk): Promise<ApprovalDecision> {
    if (this.closed) return Promise.resolve({ decision: 'deny', reason: 'session_ended', note: 'the session has ended' });
    const approval_id = `apr_${crypto.randomBytes(12).toString('base64url')}`;
    const hash = commandHash(req.argv, req.cwd);
    const expires_at = Date.now() + this.timeoutMs;
    const command = (req.context.command ?? displayCommand(req.argv)).slice(0, MAX_COMMAND);
    return new Promise<ApprovalDecision>((resolve) => {
      const timer = setTimeout(() => this.settle(approval_id, { decision: 'deny', reason: 'expired', note: 'nobody answered in time' }), this.timeoutMs);
      timer.unref();
      this.pending.set(approval_id, { hash, timer, resolve });
      // Durable before anyone can see it: a restart from here on reports it as denied.
      this.journal?.add(this.sessionId, approval_id);
      this.sink.emit({
        type: 'APPROVAL_REQUESTED',
        approval_id,
        category: req.category,
        summary: req.summary.slice(0, WIRE_LIMITS.TEXT),
        risk: req.risk,
        context: { ...req.context, command, command_hash: hash, cwd: req.cwd, expires_at },
      });
      if (this.pending.size === 1) this.sink.waiting(true);
    });
  }

  /** session:approve. NOT_FOUND for an unknown or already-settled id, CONFLICT for another command's hash. */
  decide(input: DecideInput): Result<null> {
    const p = this.pending.get(input.approval_id);
    if (!p) return fail('NOT_FOUND', `no pending approval ${input.approval_id} (already decided, expired, or never asked)`);
    if (!timingSafeEqualHex(p.hash, input.command_hash)) {
      return fail('CONFLICT', `approval ${input.approval_id} is for a different command (command_hash does not match)`);
    }
    this.settle(input.approval_id, {
      decision: input.decision,
      note: input.note?.slice(0, MAX_NOTE),
      decided_by: input.decided_by.slice(0, WIRE_LIMITS.NAME),
      reason: 'decided',
    });
    return ok(null);
  }

  /** The session ends: every pending approval is denied, and no new one is accepted. */
  closeAll(reason: ResolveReason = 'session_ended'): void {
    this.closed = true;
    for (const id of [...this.pending.keys()]) this.settle(id, { decision: 'deny', reason, note: reason === 'session_ended' ? 'the session ended while waiting' : undefined });
    this.journal?.clear(this.sessionId);
  }

  private settle(id: string, d: ApprovalDecision): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    this.journal?.remove(this.sessionId, id);
    this.sink.emit({
      type: 'APPROVAL_RESOLVED',
      approval_id: id,
      decision: d.decision,
      reason: d.reason,
      ...(d.note !== undefined ? { note: d.note } : {}),
      ...(d.decided_by !== undefined ? { decided_by: d.decided_by } : {}),
    });
    if (this.pending.size === 0) this.sink.waiting(false);
    p.resolve(d);
  }
}

function timingSafeEqualHex(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

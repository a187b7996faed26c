import { canTransition, statesBefore, TERMINAL_STATES, type SessionState } from '../../protocol';
import type { Db } from '../db';
import { SYSTEM_ACTOR, type AuditActor, type AuditService } from './audit';

/**
 * The one place the control plane changes a session's state (issue 14 item 3): every write is
 * checked against the lifecycle table in protocol/lifecycle.ts. An illegal change — a runner
 * that returns after its grace period and reports RUNNING or COMPLETED for a session the server
 * already failed, say — is refused, logged and audited, and never stored.
 */

export interface StateChange {
  to: SessionState;
  reason: string;
  /** When it happened (the event's ts); a terminal state sets endedAt from it. */
  at: number;
}

export interface RefusedChange {
  orgId: string;
  sessionId: string;
  from: SessionState;
  to: SessionState;
  reason: string;
}

export interface FoldedState {
  state: SessionState;
  reason: string;
  endedAt?: Date;
}

/**
 * Applies a batch's state changes, in seq order, to the stored state: the last legal one wins,
 * a repeat of the current state (a resend) is nothing, every other illegal one is refused.
 */
export function foldStateChanges(
  current: SessionState,
  changes: StateChange[],
): { next: FoldedState | null; refused: Array<{ from: SessionState; to: SessionState; reason: string }> } {
  let state = current;
  let next: FoldedState | null = null;
  const refused = [];
  for (const c of changes) {
    if (c.to === state) continue;
    if (!canTransition(state, c.to)) {
      refused.push({ from: state, to: c.to, reason: c.reason });
      continue;
    }
    state = c.to;
    next = { state, reason: c.reason, ...((TERMINAL_STATES as string[]).includes(state) ? { endedAt: new Date(c.at) } : {}) };
  }
  return { next, refused };
}

export function createSessionStateService(db: Db, audit: AuditService) {
  /** Logged and audited; the session row keeps what it had. */
  async function refused(changes: RefusedChange[], actor: AuditActor): Promise<void> {
    for (const c of changes) {
      console.warn(`[server] refused session ${c.sessionId} ${c.from} → ${c.to} from ${actor} (${c.reason.slice(0, 200)})`);
      await audit.record({
        orgId: c.orgId,
        actor,
        action: 'session.transition_refused',
        target: c.sessionId,
        detail: { from: c.from, to: c.to, reason: c.reason.slice(0, 500) },
      });
    }
  }

  return {
    refused,

    /**
     * Moves sessions to `to` where the lifecycle allows it, as one conditional update each (a
     * concurrent change cannot slip between the check and the write). Returns the ids changed.
     */
    async transition(orgId: string, ids: string[], to: SessionState, reason: string, actor: AuditActor = SYSTEM_ACTOR): Promise<string[]> {
      const changed: string[] = [];
      const refusals: RefusedChange[] = [];
      const data = { state: to, reason, ...((TERMINAL_STATES as string[]).includes(to) ? { endedAt: new Date() } : {}) };
      for (const id of ids) {
        const res = await db.session.updateMany({ where: { id, orgId, state: { in: statesBefore(to) } }, data });
        if (res.count > 0) {
          changed.push(id);
          continue;
        }
        const row = await db.session.findFirst({ where: { id, orgId }, select: { state: true } });
        if (row && row.state !== to) refusals.push({ orgId, sessionId: id, from: row.state as SessionState, to, reason });
      }
      await refused(refusals, actor);
      return changed;
    },
  };
}

export type SessionStateService = ReturnType<typeof createSessionStateService>;

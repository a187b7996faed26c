import type { SessionState } from './world';

/**
 * The session lifecycle of ARCHITECTURE.md §6, forward-only; RUNNING ⇄ WAITING_FOR_APPROVAL /
 * PAUSED_BY_HUMAN are the only loops. The one table the runner (which emits the changes) and the
 * control plane (which stores them, server/services/session-state.ts) both obey.
 */
const NEXT: Record<SessionState, readonly SessionState[]> = {
  CREATED: ['PREPARING_WORKSPACE', 'STOPPING', 'FAILED'],
  PREPARING_WORKSPACE: ['STARTING_PROVIDER', 'STOPPING', 'FAILED'],
  STARTING_PROVIDER: ['RUNNING', 'STOPPING', 'FAILED'],
  RUNNING: ['WAITING_FOR_APPROVAL', 'PAUSED_BY_HUMAN', 'STOPPING', 'COMPLETED', 'FAILED'],
  WAITING_FOR_APPROVAL: ['RUNNING', 'STOPPING', 'COMPLETED', 'FAILED'],
  PAUSED_BY_HUMAN: ['RUNNING', 'STOPPING', 'COMPLETED', 'FAILED'],
  STOPPING: ['COMPLETED', 'FAILED'],
  COMPLETED: [],
  FAILED: [],
};

export function canTransition(from: SessionState, to: SessionState): boolean {
  return NEXT[from].includes(to);
}

/** Every state a session may be in for a change to `to` to be legal (a conditional update's WHERE). */
export function statesBefore(to: SessionState): SessionState[] {
  return (Object.keys(NEXT) as SessionState[]).filter((from) => NEXT[from].includes(to));
}

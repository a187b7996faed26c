import type { SessionSummary } from '../../protocol/ui';

/** What makes a worker (a run, a DTA run, a quest step) differ from a live session's sprite. */
export type WorkerFields = Pick<SessionSummary, 'id' | 'repo_id' | 'runner_id' | 'room_path' | 'title' | 'state' | 'reason' | 'created_by' | 'created_at' | 'mode'> &
  Partial<Pick<SessionSummary, 'activity' | 'activity_detail'>>;

/**
 * A worker as a session summary: the renderer draws sessions, and a worker is one with no
 * terminal, no agent activity of its own, no diff and no tests.
 */
export function workerSession(w: WorkerFields): SessionSummary {
  return {
    provider: 'shell',
    kind: 'agent',
    last_seq: 0,
    activity: null,
    activity_detail: '',
    activity_since: null,
    diff: null,
    tests: null,
    runner_lost: false,
    ...w,
  };
}

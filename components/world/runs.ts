/** Runs of deterministic agents as the village draws them: workers in the workshop. */
import type { RunSummary } from '../../protocol/deterministic';
import type { SessionSummary } from '../../protocol/ui';
import type { SessionState } from '../../protocol/world';
import { WORKSHOP_ID } from './layout';
import { workerSession } from './worker-session';

const STATE_OF_RUN: Record<RunSummary['status'], SessionState> = {
  // Queued: the "starting" bubble; running: working at a bench; completed: walks out; failed: a red cross, then out.
  queued: 'CREATED',
  running: 'RUNNING',
  completed: 'COMPLETED',
  failed: 'FAILED',
};

/** A run as a sprite in the workshop (the renderer draws sessions; a run is one that stands at a bench). */
export function runAsSession(run: RunSummary): SessionSummary {
  return workerSession({
    id: run.id,
    repo_id: WORKSHOP_ID,
    runner_id: run.runner_id,
    room_path: '',
    title: `${run.agent_name} (run)`,
    state: STATE_OF_RUN[run.status],
    reason: run.reason,
    created_by: run.created_by,
    created_at: run.created_at,
    mode: 'read_only',
  });
}

/**
 * DTA runs as the village draws them: a worker with a measuring tape in the room of the files it
 * touches, its phase on its label (deterministic-tool-adapters.md, "Observability"). Pure: the
 * renderer draws sessions, and a DTA run is one standing in its room.
 */
import type { DtaRunStatus, DtaRunSummary } from '../../protocol/dta';
import type { SessionSummary } from '../../protocol/ui';
import type { SessionState } from '../../protocol/world';
import { workerSession } from './worker-session';

/** Run ids carry this prefix (DtaRunIdSchema): the actors layer gives such a sprite the tape. */
const DTA_ID_PREFIX = 'dta_';

export function isDtaWorker(id: string): boolean {
  return id.startsWith(DTA_ID_PREFIX);
}

const STATE_OF: Record<DtaRunStatus, SessionState> = {
  // Queued: the "starting" bubble; measuring and applying: at work; the gate: the approval hand;
  // verified: walks out; denied: walks out; failed: a red cross, then out.
  queued: 'CREATED',
  waiting_for_lock: 'RUNNING',
  proposing: 'RUNNING',
  waiting_for_approval: 'WAITING_FOR_APPROVAL',
  applying: 'RUNNING',
  verified: 'COMPLETED',
  denied: 'COMPLETED',
  failed: 'FAILED',
};

/** The phase as the label says it. */
export const DTA_PHASE_WORDS: Record<DtaRunStatus, string> = {
  queued: 'queued',
  waiting_for_lock: 'waiting for lock',
  proposing: 'measuring',
  waiting_for_approval: 'waiting for approval',
  applying: 'applying',
  verified: 'verified',
  denied: 'denied',
  failed: 'failed',
};

/** The deepest directory holding every file ("" for the top level). */
export function commonRoom(files: readonly string[]): string {
  if (!files.length) return '';
  let parts = files[0]!.split('/').slice(0, -1);
  for (const f of files.slice(1)) {
    const dirs = f.split('/').slice(0, -1);
    let i = 0;
    while (i < parts.length && i < dirs.length && parts[i] === dirs[i]) i++;
    parts = parts.slice(0, i);
    if (!parts.length) break;
  }
  return parts.join('/');
}

/** Where a glob can match at all: its directories before the first pattern character. */
export function globRoom(glob: string | string[] | undefined): string {
  const globs = glob === undefined ? [] : Array.isArray(glob) ? glob : [glob];
  const fixed = globs.map((g) => {
    const segs = g.split('/');
    const out: string[] = [];
    for (const s of segs.slice(0, -1)) {
      if (/[*?[\]{}!]/.test(s)) break;
      out.push(s);
    }
    return `${out.join('/')}/x`;
  });
  return fixed.length ? commonRoom(fixed) : '';
}

/**
 * The room of a run: the files it proposed to change once it has them (the started event lists
 * what it reads, the proposal what it touches), else where its glob points.
 */
export function dtaRoom(run: Pick<DtaRunSummary, 'files' | 'invocation'>): string {
  return run.files.length ? commonRoom(run.files) : globRoom(run.invocation.glob);
}

export function dtaRunAsSession(run: DtaRunSummary): SessionSummary {
  return workerSession({
    id: run.id,
    repo_id: run.repo_id,
    runner_id: run.runner_id,
    room_path: dtaRoom(run),
    title: `${run.tool} · ${DTA_PHASE_WORDS[run.status]}`,
    state: STATE_OF[run.status],
    reason: run.reason,
    created_by: run.created_by,
    created_at: run.created_at,
    mode: 'write',
    activity: run.status === 'waiting_for_lock' ? 'idle' : null,
    activity_detail: run.status === 'waiting_for_lock' ? run.reason : '',
  });
}

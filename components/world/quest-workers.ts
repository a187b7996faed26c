/**
 * Quests as the village draws them: each step that runs (or waits at its gate, or failed while
 * watched) is a worker in the room of the files it touches, its state on its label; a live quest
 * is a banner over its repository's building (engine/quest-banners.ts). Pure, like dta-workers.ts:
 * the renderer draws sessions, and a quest step is one standing in its room.
 */
import type { QuestStepState, QuestUpdated } from '../../protocol/quests';
import type { SessionSummary } from '../../protocol/ui';
import type { SessionState } from '../../protocol/world';
import { progressLine, questProgress, STATE_WORDS } from '../quests/progress';
import { commonRoom, globRoom } from './dta-workers';
import { workerSession } from './worker-session';

/** Quest ids carry this prefix (`qst_…`); a step's sprite is `<quest id>:<step id>`. */
const QUEST_ID_PREFIX = 'qst_';
const STEP_SEPARATOR = ':';

export function isQuestWorker(id: string): boolean {
  return id.startsWith(QUEST_ID_PREFIX) && id.includes(STEP_SEPARATOR);
}

/** The quest a step sprite belongs to (for the click → /quests?quest=…). */
export function questOfWorker(id: string): string {
  return id.slice(0, id.indexOf(STEP_SEPARATOR));
}

export const questWorkerId = (questId: string, stepId: string) => `${questId}${STEP_SEPARATOR}${stepId}`;

/** Steps not yet started or skipped have no sprite; the rest map onto the session states the sprites know. */
const STATE_OF: Partial<Record<QuestStepState, SessionState>> = {
  running: 'RUNNING',
  waiting_for_approval: 'WAITING_FOR_APPROVAL',
  succeeded: 'COMPLETED',
  failed: 'FAILED',
  denied: 'FAILED',
  blocked: 'FAILED',
};

/**
 * The room of a step: the files its last run changed, else the files its quest's dry-run proposed
 * (a gate, apply or verify works on those), else where its glob parameter points, else the hall.
 */
export function questStepRoom(q: Pick<QuestUpdated, 'plan' | 'steps'>, stepId: string): string {
  const s = q.steps.find((x) => x.step_id === stepId);
  const changed = s?.result ? [...s.result.modified_files, ...s.result.created_files, ...s.result.deleted_files] : [];
  if (changed.length) return commonRoom(changed);
  const plan = q.plan.steps.find((x) => x.step_id === stepId);
  // The proposal this step is bound to: its own, the one its gate approves, or the quest's.
  const of = typeof plan?.params.of === 'string' ? plan.params.of : null;
  const proposal = s?.proposal ?? (of ? q.steps.find((x) => x.step_id === of)?.proposal : null) ?? q.steps.find((x) => x.proposal)?.proposal;
  if (proposal?.files.length) return commonRoom(proposal.files);
  const glob = plan?.params.glob;
  return typeof glob === 'string' || Array.isArray(glob) ? globRoom(glob as string | string[]) : '';
}

/**
 * The sprite's name: the step and its skill. The label adds the sprite's own status words
 * (working, waiting for approval, failed); a denied or blocked step says so here, where those
 * words would only say "failed".
 */
function stepTitle(s: QuestUpdated['steps'][number]): string {
  const name = `${s.step_id}: ${s.skill}`;
  return s.state === 'denied' || s.state === 'blocked' ? `${name} ${STATE_WORDS[s.state]}` : name;
}

export function questStepsAsSessions(quests: readonly QuestUpdated[]): SessionSummary[] {
  const out: SessionSummary[] = [];
  for (const q of quests) {
    for (const s of q.steps) {
      const state = STATE_OF[s.state];
      if (!state) continue;
      out.push(
        workerSession({
          id: questWorkerId(q.id, s.step_id),
          repo_id: q.repo_id,
          runner_id: q.runner_id,
          room_path: questStepRoom(q, s.step_id),
          title: stepTitle(s),
          state,
          reason: s.reason,
          created_by: q.created_by,
          created_at: q.created_at,
          mode: 'write',
        }),
      );
    }
  }
  return out;
}

/** What a building's banner says; null when no quest of that repository is live. */
export interface QuestBanner {
  questId: string;
  goal: string;
  /** "step 2/4 gate: waiting for approval" */
  progress: string;
  state: QuestUpdated['state'];
  /** Steps that failed, were denied or blocked (the banner's red mark). */
  failed: string[];
  href: string;
}

const LIVE: readonly QuestUpdated['state'][] = ['running', 'waiting_for_approval'];

/** One banner per repository with a live quest (the newest, when several run on one building). */
export function questBanners(quests: readonly QuestUpdated[]): Map<string, QuestBanner> {
  const out = new Map<string, QuestBanner>();
  const newestFirst = [...quests].sort((a, b) => b.created_at.localeCompare(a.created_at));
  for (const q of newestFirst) {
    if (!LIVE.includes(q.state) || out.has(q.repo_id)) continue;
    out.set(q.repo_id, { questId: q.id, goal: q.goal, progress: progressLine(q), state: q.state, failed: questProgress(q).failed, href: `/quests?quest=${encodeURIComponent(q.id)}` });
  }
  return out;
}

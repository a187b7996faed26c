/** Pure helpers that turn a session's state and reason into what the village shows. */
import { agentGateText } from '../../protocol/agent-gates';
import type { SessionSummary } from '../../protocol/ui';

/** Icon over a sprite: "…" waiting for input, a hand for approval, "zz" paused / idle, a red cross for failed. */
export type BubbleKind = 'input' | 'approval' | 'idle' | 'failed' | 'starting';

type Status = Pick<SessionSummary, 'state' | 'reason'> & {
  activity?: SessionSummary['activity'];
  activitySince?: number | null;
  /** The activity's detail: a gate ("needs sign-in: codex", "waiting for your answer: …") is shown as is. */
  activityDetail?: string | null;
};

export function bubbleFor(s: Status): BubbleKind | null {
  switch (s.state) {
    case 'WAITING_FOR_APPROVAL':
      return 'approval';
    case 'PAUSED_BY_HUMAN':
      return 'idle';
    case 'FAILED':
      return 'failed';
    case 'CREATED':
    case 'PREPARING_WORKSPACE':
    case 'STARTING_PROVIDER':
      return 'starting';
    case 'RUNNING':
      // From the provider's hooks or the runner's idle detection, never from screen text.
      if (s.activity === 'idle') return 'idle';
      if (s.activity === 'waiting_for_input') return 'input';
      return null;
    default:
      return null;
  }
}

/** A short readable status, for labels and the accessible description. */
export function statusText(s: Status, now = Date.now()): string {
  switch (bubbleFor(s)) {
    case 'approval':
      return 'waiting for approval';
    case 'input':
      return agentGateText(s.activityDetail) ?? 'waiting for input';
    case 'idle': {
      if (s.state === 'PAUSED_BY_HUMAN') return 'paused';
      const minutes = s.activitySince ? Math.floor((now - s.activitySince) / 60_000) : 0;
      return minutes >= 1 ? `idle for ${minutes} min` : 'idle';
    }
    case 'failed':
      return 'failed';
    case 'starting':
      return 'starting';
    default:
      return s.state === 'STOPPING' ? 'stopping' : 'working';
  }
}

/** How long a FAILED sprite stays (with its red cross) before it walks out. */
export const FAILED_LINGER_MS = 6000;

/** Sessions that get a sprite when first seen (ended ones never walk in). */
export function spawnsSprite(s: Pick<SessionSummary, 'state'>): boolean {
  return s.state !== 'COMPLETED' && s.state !== 'FAILED';
}

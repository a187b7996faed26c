/** Pure helpers that turn a session's state and reason into what the village shows. */
import type { SessionSummary } from '../../protocol/ui';

/** Icon over a sprite: "…" waiting for input, a hand for approval, "zz" paused / idle, a red cross for failed. */
export type BubbleKind = 'input' | 'approval' | 'idle' | 'failed' | 'starting';

export function bubbleFor(s: Pick<SessionSummary, 'state' | 'reason'>): BubbleKind | null {
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
    case 'RUNNING': {
      const r = s.reason.toLowerCase();
      if (/\bidle\b/.test(r)) return 'idle';
      if (/\binput\b|\bprompt\b|waiting for (you|user)/.test(r)) return 'input';
      return null;
    }
    default:
      return null;
  }
}

/** A short readable status, for labels and the accessible description. */
export function statusText(s: Pick<SessionSummary, 'state' | 'reason'>): string {
  switch (bubbleFor(s)) {
    case 'approval':
      return 'waiting for approval';
    case 'input':
      return 'waiting for input';
    case 'idle':
      return s.state === 'PAUSED_BY_HUMAN' ? 'paused' : s.reason || 'idle';
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

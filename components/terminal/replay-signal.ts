'use client';
import { useCallback, useMemo, useReducer, useSyncExternalStore } from 'react';
import type { SessionSummary } from '../../protocol';
import { arrived, follow, NO_WALK, target, type ReplayWalk, type RoomStep } from './replay-walk';

/** Which session is being replayed, at what moment, and the room its sprite stood in then. */
export interface ReplaySignal {
  sessionId: string;
  ts: number;
  room: string | null;
  /** The session's rooms over time (its file touches): the sprite walks through the ones the replay passes. */
  steps?: readonly RoomStep[];
}

let current: ReplaySignal | null = null;
const listeners = new Set<() => void>();

/** The terminal's scrubber says where the replay is (null: back to live). */
export function publishReplay(signal: ReplaySignal | null): void {
  if (signal === current || (signal && current && signal.sessionId === current.sessionId && signal.ts === current.ts && signal.room === current.room && signal.steps === current.steps)) return;
  current = signal;
  listeners.forEach((l) => l());
}

export function useReplaySignal(): ReplaySignal | null {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => current,
    () => null,
  );
}

/** The village's sessions with the replayed one standing where it stood then (its sprite walks there). */
export function withReplayedRoom(sessions: SessionSummary[], replay: ReplaySignal | null): SessionSummary[] {
  if (!replay || replay.room === null) return sessions;
  const room = replay.room;
  return sessions.map((s) => (s.id === replay.sessionId ? { ...s, room_path: room } : s));
}

/** "replaying 14:02:31" in the viewer's local time. */
export function replayClock(ts: number): string {
  return new Date(ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

type WalkAction = { kind: 'signal'; signal: ReplaySignal | null } | { kind: 'arrived'; sessionId: string; room: string };

function walkReducer(w: ReplayWalk, a: WalkAction): ReplayWalk {
  return a.kind === 'arrived' ? arrived(w, a.sessionId, a.room) : follow(w, a.signal, a.signal?.steps ?? []);
}

/**
 * The village's sessions with the replayed one walking through the rooms the replay passes, one
 * at a time (replay-walk.ts); `onArrived` is the village telling it a sprite reached a room.
 */
export function useReplayedSessions(sessions: SessionSummary[]): { sessions: SessionSummary[]; onArrived(sessionId: string, room: string): void } {
  const signal = useReplaySignal();
  const [state, dispatch] = useReducer(
    (s: { walk: ReplayWalk; signal: ReplaySignal | null }, a: WalkAction) => ({ walk: walkReducer(s.walk, a), signal: a.kind === 'signal' ? a.signal : s.signal }),
    { walk: NO_WALK, signal: null },
  );
  // Follow the signal during render (React's "adjust state when a prop changes"): no extra frame with a stale room.
  if (state.signal !== signal) dispatch({ kind: 'signal', signal });
  const onArrived = useCallback((sessionId: string, room: string) => dispatch({ kind: 'arrived', sessionId, room }), []);
  const room = target(state.walk);
  const view = useMemo(() => withReplayedRoom(sessions, signal && { ...signal, room }), [sessions, signal, room]);
  return { sessions: view, onArrived };
}

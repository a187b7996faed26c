'use client';
import { useSyncExternalStore } from 'react';
import type { SessionSummary } from '../../protocol';

/** Which session is being replayed, at what moment, and the room its sprite stood in then. */
export interface ReplaySignal {
  sessionId: string;
  ts: number;
  room: string | null;
}

let current: ReplaySignal | null = null;
const listeners = new Set<() => void>();

/** The terminal's scrubber says where the replay is (null: back to live). */
export function publishReplay(signal: ReplaySignal | null): void {
  if (signal === current || (signal && current && signal.sessionId === current.sessionId && signal.ts === current.ts && signal.room === current.room)) return;
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

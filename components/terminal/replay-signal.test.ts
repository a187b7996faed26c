import { describe, expect, it } from 'vitest';
import type { SessionSummary, TimelineMark } from '../../protocol';
import { publishReplay, withReplayedRoom } from './replay-signal';
import { nextMark } from './TerminalScrubber';

const session = (id: string, room: string) => ({ id, room_path: room }) as SessionSummary;

describe('replay in the village', () => {
  it('moves only the replayed session to the room it stood in then', () => {
    const sessions = [session('sess_aaaaaa', 'src'), session('sess_bbbbbb', 'docs')];
    expect(withReplayedRoom(sessions, null)).toBe(sessions);
    expect(withReplayedRoom(sessions, { sessionId: 'sess_aaaaaa', ts: 1, room: null })).toBe(sessions);
    const moved = withReplayedRoom(sessions, { sessionId: 'sess_aaaaaa', ts: 1, room: 'test' });
    expect(moved.map((s) => s.room_path)).toEqual(['test', 'docs']);
    expect(withReplayedRoom(sessions, { sessionId: 'sess_aaaaaa', ts: 1, room: '' })[0]!.room_path).toBe('');
    publishReplay(null);
  });

  it('jumps to the next moment of a kind after the current seq', () => {
    const marks: TimelineMark[] = [
      { seq: 3, ts: 1, kind: 'file', label: 'a', room: 'src' },
      { seq: 5, ts: 2, kind: 'approval', label: 'merge' },
      { seq: 9, ts: 3, kind: 'file', label: 'b', room: 'docs' },
    ];
    expect(nextMark(marks, 'file', 0)?.seq).toBe(3);
    expect(nextMark(marks, 'file', 3)?.seq).toBe(9);
    expect(nextMark(marks, 'approval', 5)).toBeNull();
    expect(nextMark(marks, 'error', 0)).toBeNull();
  });
});

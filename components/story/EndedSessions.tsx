'use client';
import { useState } from 'react';
import SessionHistory from './SessionHistory';
import { STORY_STRINGS as S } from './strings';

/**
 * The session list's filter for ended sessions: off by default (the list shows live work); on, the
 * ended sessions of the selected room or its whole building, each opening its story and terminal.
 */
export default function EndedSessions({ room, roomLabel }: { room: { repoId: string; roomPath: string } | null; roomLabel: string }) {
  const [show, setShow] = useState(false);
  const [scope, setScope] = useState<'room' | 'building'>('room');
  return (
    <div className="ended-sessions">
      <label className="small">
        <input type="checkbox" checked={show} onChange={(e) => setShow(e.target.checked)} /> {S.showEnded}
      </label>
      {show && room && (
        <>
          <label className="sr-only" htmlFor="history-scope">
            Ended sessions of
          </label>
          <select id="history-scope" value={scope} onChange={(e) => setScope(e.target.value as 'room' | 'building')}>
            <option value="room">this room ({roomLabel})</option>
            <option value="building">this building</option>
          </select>
          <SessionHistory
            repoId={room.repoId}
            roomPath={scope === 'room' ? room.roomPath : undefined}
            label={`${S.historyTitle} in ${scope === 'room' ? roomLabel : 'this building'}`}
          />
        </>
      )}
    </div>
  );
}

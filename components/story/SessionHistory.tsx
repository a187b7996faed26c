'use client';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import type { EndedSession } from '../../protocol';
import { api } from '../ui/api';
import { STORY_STRINGS as S } from './strings';

/**
 * Ended sessions, newest first — of one room, one building, or the whole org — each linking to
 * its story (where its terminal can be replayed).
 */
export default function SessionHistory({ repoId, roomPath, label }: { repoId?: string; roomPath?: string; label: string }) {
  const params = new URLSearchParams();
  if (repoId) params.set('repo_id', repoId);
  if (repoId && roomPath !== undefined) params.set('room_path', roomPath);
  const q = useQuery({ queryKey: ['session-history', repoId ?? '', roomPath ?? null], queryFn: () => api<EndedSession[]>(`/api/session-history?${params}`) });
  return (
    <section aria-label={label} className="history">
      {q.isError && <p className="error-line">{q.error.message}</p>}
      {q.data && q.data.length === 0 && <p className="muted small">{S.historyEmpty}</p>}
      <ul className="history-list">
        {q.data?.map((s) => (
          <li key={s.id} data-session-id={s.id}>
            <Link href={`/sessions/${s.id}`}>{s.title}</Link>{' '}
            <span className="muted small">
              {s.state.toLowerCase()} · {s.repo_name}/{s.room_path} · {s.ended_at ? new Date(s.ended_at).toLocaleString() : ''}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

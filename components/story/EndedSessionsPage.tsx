'use client';
import Header from '../ui/Header';
import { useRequireLogin } from '../ui/use-auth-redirect';
import SessionHistory from './SessionHistory';
import { STORY_STRINGS as S } from './strings';

export default function EndedSessionsPage() {
  const me = useRequireLogin();
  if (!me.isSuccess) return <main className="center-note">{S.loading}</main>;
  return (
    <div className="app-shell">
      <Header me={me.data} />
      <main className="story">
        <h1>{S.historyTitle}</h1>
        <SessionHistory label={S.historyTitle} />
      </main>
    </div>
  );
}

'use client';
import Link from 'next/link';
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { SessionStory } from '../../protocol';
import TerminalPanel from '../terminal/TerminalPanel';
import Header from '../ui/Header';
import { api } from '../ui/api';
import { useRequireLogin } from '../ui/use-auth-redirect';
import { useWorld } from '../ui/use-world';
import RoomPath from './RoomPath';
import { STORY_STRINGS as S } from './strings';

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  return h > 0 ? `${h} h ${m % 60} min` : m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}
const count = (n: number | null) => (n === null ? 'binary' : String(n));

/** The one-page story of a session (issue 19 item 4), linkable at /sessions/<id> and exportable as Markdown. */
export default function StoryScreen({ sessionId }: { sessionId: string }) {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const story = useQuery({ queryKey: ['story', sessionId], queryFn: () => api<SessionStory>(`/api/sessions/${sessionId}/story`), enabled: me.isSuccess });
  const [terminal, setTerminal] = useState(false);
  const [copied, setCopied] = useState(false);
  if (me.isError) return <main className="center-note">{me.error.message}</main>;
  if (me.isPending || story.isPending) return <main className="center-note">{S.loading}</main>;
  if (story.isError) return <main className="center-note error-line">{story.error.message}</main>;
  const st = story.data;
  const s = st.session;
  const md = `/api/sessions/${sessionId}/story?format=md`;
  const copy = async () => {
    const text = await (await fetch(md, { credentials: 'same-origin' })).text();
    await navigator.clipboard?.writeText(text).catch(() => undefined);
    setCopied(true);
  };
  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data?.runners} />
      <main className="story" aria-label={`${S.title}: ${s.title}`}>
        <p>
          <Link href="/">{S.backToVillage}</Link>
        </p>
        <h1>
          {S.title}: {s.title}
        </h1>
        <p className="row">
          <a className="btn" href={md} download>
            {S.exportMarkdown}
          </a>
          <button type="button" className="btn" onClick={() => void copy()}>
            {copied ? S.copied : S.copyMarkdown}
          </button>
          <button type="button" className="btn" onClick={() => setTerminal((t) => !t)} aria-expanded={terminal}>
            {S.openTerminal}
          </button>
        </p>
        <dl className="story-facts">
          <dt>{S.outcome}</dt>
          <dd data-testid="story-outcome">
            {s.state} — {s.reason}
          </dd>
          <dt>{S.agent}</dt>
          <dd>
            {s.provider} in {st.repo.name}, started by {s.created_by}
          </dd>
          <dt>{S.duration}</dt>
          <dd data-testid="story-duration">{duration(st.duration_ms)}</dd>
          <dt>{S.agentMinutes}</dt>
          <dd data-testid="story-agent-minutes">{st.agent_minutes}</dd>
        </dl>
        {terminal && (
          <section className="story-terminal dock" aria-label="Terminal replay">
            <TerminalPanel session={s} readOnly readOnlyNote={S.replayNote} onClose={() => setTerminal(false)} onStop={() => undefined} />
          </section>
        )}
        <section aria-label={S.rooms}>
          <h2 className="panel-title">{S.rooms}</h2>
          <p data-testid="story-rooms">{st.rooms.map((r) => `${r || '/'}`).join(' → ')}</p>
          <RoomPath repo={world.data?.repos.find((r) => r.id === st.repo.id)} rooms={st.rooms} />
        </section>
        <section aria-label={S.files}>
          <h2 className="panel-title">
            {S.files} ({st.files.length})
          </h2>
          {st.files.length === 0 && <p className="muted">{S.noFiles}</p>}
          <ul className="diff-list" data-testid="story-files">
            {st.files.map((f) => (
              <li key={f.path}>
                <code>{f.path}</code> <span className="muted">+{count(f.added)} −{count(f.removed)}</span>
              </li>
            ))}
          </ul>
          {st.patch && (
            <details open>
              <summary>{S.diff}</summary>
              <pre className="story-patch" data-testid="story-patch">
                {st.patch}
              </pre>
            </details>
          )}
        </section>
        <section aria-label={S.tests}>
          <h2 className="panel-title">{S.tests}</h2>
          {st.tests.length === 0 && <p className="muted">{S.noTests}</p>}
          <ul data-testid="story-tests">
            {st.tests.map((t, i) => (
              <li key={i}>
                <code>{t.command}</code>: {t.passed} passed, {t.failed} failed{t.exit_code === null ? '' : ` (exit ${t.exit_code})`}
              </li>
            ))}
          </ul>
        </section>
        <section aria-label={S.approvals}>
          <h2 className="panel-title">{S.approvals}</h2>
          {st.approvals.length === 0 && <p className="muted">{S.noApprovals}</p>}
          <ul data-testid="story-approvals">
            {st.approvals.map((a) => (
              <li key={a.id}>
                {a.category}: {a.summary} — <strong>{a.state}</strong>
                {a.decided_by ? ` by ${a.decided_by}` : ''}
                {a.note ? ` (“${a.note}”)` : ''}
              </li>
            ))}
          </ul>
        </section>
        <section aria-label={S.secrets}>
          <h2 className="panel-title">{S.secrets}</h2>
          {st.redactions.length === 0 && <p className="muted">{S.noSecrets}</p>}
          <ul data-testid="story-secrets">
            {st.redactions.map((r) => (
              <li key={`${r.source}:${r.rule}:${r.secret_name ?? ''}`}>
                {r.secret_name ?? r.rule} ×{r.count} <span className="muted small">({r.source})</span>
              </li>
            ))}
          </ul>
        </section>
      </main>
    </div>
  );
}

'use client';
import Link from 'next/link';
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { AlertSummary, ProviderId, RepoSummary, SessionSummary } from '../../protocol';
import { PATROL_KIND_LABELS } from '../../protocol/patrols';
import { api, ApiRequestError } from './api';
import { questFor, STRINGS } from './strings';

export interface AlertPanelProps {
  alert: AlertSummary;
  repo: RepoSummary | undefined;
  canOperate: boolean;
  /** Providers some online runner offers (the quest's agent). */
  providers: ProviderId[];
  onClose(): void;
  /** The quest's session was spawned: the village opens its terminal. */
  onSpawned(session: SessionSummary): void;
}

/** A bug's card in the dock: what the patrol found, the log lines about it, and the quest to fix it. */
export default function AlertPanel({ alert, repo, canOperate, providers, onClose, onSpawned }: AlertPanelProps) {
  const ai = providers.find((p) => p !== 'shell');
  const [provider, setProvider] = useState<ProviderId>(ai ?? 'shell');
  const [goal, setGoal] = useState(() => questFor(alert));
  const [error, setError] = useState<string | null>(null);
  const label = PATROL_KIND_LABELS[alert.kind];
  const where = alert.path ? `${alert.path}${alert.line ? `:${alert.line}` : ''}` : '(no file)';

  const send = useMutation({
    mutationFn: () =>
      api<SessionSummary>('/api/sessions', {
        body: { repo_id: alert.repo_id, room_path: alert.room_path, provider, goal: goal.trim(), title: `Quest: fix ${alert.path ?? `the ${label.toLowerCase()}`}` },
      }),
    onSuccess: (s) => {
      setError(null);
      onSpawned(s);
    },
    onError: (e) => setError(e instanceof ApiRequestError ? e.message : String(e)),
  });

  return (
    <section className="alert-panel" aria-label={`Alert: ${alert.message}`} data-alert-id={alert.id}>
      <div className="terminal-bar">
        <span className="bug-dot" aria-hidden /> <span className="terminal-title">{label} patrol alert</span>
        <span className={`state-pill ${alert.state === 'open' ? 'state-failed' : 'state-running'}`}>{alert.state}</span>
        <span className="terminal-reason">
          {repo?.name ?? 'repository'}/{alert.room_path || '(hall)'}
        </span>
        <span className="spacer" />
        <Link className="btn btn-small" href={`/patrols?repo=${alert.repo_id}`}>
          {STRINGS.patrolsLink}
        </Link>
        <button type="button" className="btn btn-small" onClick={onClose} aria-label={STRINGS.closeAlert}>
          ✕
        </button>
      </div>
      <div className="alert-body">
        <div className="alert-main">
          <p className="alert-message" data-testid="alert-message">
            {alert.message}
          </p>
          <p className="small muted">
            <code>{where}</code> · raised {new Date(alert.raised_at).toLocaleString()} · last seen {new Date(alert.last_seen_at).toLocaleString()}
          </p>
          <h3 className="panel-title">Log excerpt</h3>
          <pre className="alert-excerpt" data-testid="alert-excerpt">
            {alert.excerpt || '(no output)'}
          </pre>
        </div>
        <aside className="alert-quest" aria-label={STRINGS.questTitle}>
          <h3 className="panel-title">{STRINGS.questTitle}: fix it</h3>
          {canOperate ? (
            <>
              <label className="small block">
                Agent
                <select value={provider} onChange={(e) => setProvider(e.target.value as ProviderId)} aria-label="Quest provider">
                  {(providers.length ? providers : (['shell'] as ProviderId[])).map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
              </label>
              <label className="small block">
                Task
                <textarea rows={7} value={goal} onChange={(e) => setGoal(e.target.value)} aria-label="Quest task" />
              </label>
              <p className="small muted">It starts in {alert.room_path ? `/${alert.room_path}` : 'the hall'}, in its own worktree.</p>
              <button type="button" className="btn btn-primary" disabled={send.isPending || !goal.trim() || alert.state !== 'open'} onClick={() => send.mutate()}>
                {send.isPending ? 'Sending…' : STRINGS.sendAgent}
              </button>
              {error && (
                <p className="error-line" role="alert">
                  {error}
                </p>
              )}
            </>
          ) : (
            <p className="small muted">{STRINGS.operatorsOnlyQuest}</p>
          )}
        </aside>
      </div>
    </section>
  );
}

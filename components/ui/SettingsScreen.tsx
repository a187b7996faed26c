'use client';
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RepoSummary } from '../../protocol';
import { api, ApiRequestError } from './api';
import Header from './Header';
import MembersSection from './MembersSection';
import NotificationSettingsSection from '../notifications/NotificationSettingsSection';
import { STRINGS } from './strings';
import { useRequireLogin } from './use-auth-redirect';
import { useWorld, WORLD_KEY } from './use-world';
import { RunnerProviders } from './RunnerProviders';
import { useRole } from './use-role';

type TokenRow = { id: string; name: string; created_at: string; revoked: boolean };

export default function SettingsScreen() {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const qc = useQueryClient();
  const isAdmin = useRole().atLeast('admin');
  const [repoError, setRepoError] = useState<string | null>(null);
  const [newToken, setNewToken] = useState<string | null>(null);

  const tokens = useQuery({ queryKey: ['runner-tokens'], queryFn: () => api<TokenRow[]>('/api/runner-tokens'), enabled: isAdmin });
  const addRepo = useMutation({
    mutationFn: (body: { source: string; name?: string }) => api<RepoSummary>('/api/repos', { body }),
    onSuccess: () => {
      setRepoError(null);
      void qc.invalidateQueries({ queryKey: WORLD_KEY });
    },
    onError: (e) => setRepoError(e instanceof ApiRequestError ? e.message : String(e)),
  });
  const revokeToken = useMutation({
    mutationFn: (id: string) => api(`/api/runner-tokens/${id}`, { method: 'DELETE' }),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['runner-tokens'] }),
  });
  const createToken = useMutation({
    mutationFn: (name: string) => api<{ id: string; token: string }>('/api/runner-tokens', { body: { name } }),
    onSuccess: (t) => {
      setNewToken(t.token);
      void qc.invalidateQueries({ queryKey: ['runner-tokens'] });
    },
  });

  if (!me.data || !world.data) return <main className="center-note">Loading settings…</main>;

  function onAddRepo(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const name = String(f.get('name') ?? '').trim();
    addRepo.mutate({ source: String(f.get('source') ?? ''), name: name || undefined });
  }

  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <main className="settings">
        <h1>Settings</h1>
        {isAdmin ? (
          <MembersSection meId={me.data.user.id} />
        ) : (
          <section className="card" aria-labelledby="members-title">
            <h2 id="members-title">{STRINGS.membersTitle}</h2>
            <p className="muted">{STRINGS.adminsOnly}</p>
          </section>
        )}
        <NotificationSettingsSection isAdmin={isAdmin} />
        <section className="card" aria-labelledby="repos-title">
          <h2 id="repos-title">Repositories</h2>
          <p className="muted">Each repository is a building. A runner clones it and reports its directories (the rooms).</p>
          <ul className="plain-list">
            {world.data.repos.map((r) => (
              <li key={r.id} data-repo-id={r.id}>
                <strong>{r.name}</strong> <span className="muted small">{r.source}</span>{' '}
                <span className={`state-pill ${r.status === 'ready' ? 'state-running' : r.status === 'error' ? 'state-failed' : 'state-created'}`}>
                  {r.status === 'ready' ? `${r.tree?.dirs.length ?? 0} rooms` : r.status === 'pending' ? 'scanning…' : 'error'}
                </span>
                {r.error && <div className="error-line">{r.error}</div>}
              </li>
            ))}
          </ul>
          {isAdmin ? (
            <form className="inline-form" onSubmit={onAddRepo}>
              <label>
                Local path or git URL
                <input name="source" required placeholder="/home/me/project or https://host/owner/repo.git" />
              </label>
              <label>
                Name (optional)
                <input name="name" maxLength={100} />
              </label>
              <button className="btn btn-primary" type="submit" disabled={addRepo.isPending}>
                {addRepo.isPending ? 'Adding…' : STRINGS.addRepoButton}
              </button>
              {repoError && (
                <p className="error-line" role="alert">
                  {repoError}
                </p>
              )}
            </form>
          ) : (
            <p className="muted">Only admins can add repositories.</p>
          )}
        </section>
        <section className="card" aria-labelledby="runners-title">
          <h2 id="runners-title">Runners</h2>
          <ul className="plain-list">
            {world.data.runners.map((r) => (
              <li key={r.id}>
                <strong>{r.name}</strong> on {r.hostname} · {r.online ? 'online' : 'offline'} · capacity {r.capacity} · providers{' '}
                <RunnerProviders providers={r.providers} info={r.provider_info ?? []} />
              </li>
            ))}
          </ul>
          {isAdmin && (
            <>
              <h3>Runner tokens</h3>
              <p className="muted">
                A runner on another machine dials out with a token: <code>npm run runner -- --server URL --token TOKEN --name NAME</code>
              </p>
              <ul className="plain-list">
                {tokens.data?.map((t) => (
                  <li key={t.id}>
                    {t.name} · created {new Date(t.created_at).toLocaleString()} {t.revoked ? '· revoked' : ''}{' '}
                    {!t.revoked && (
                      <button type="button" className="btn btn-small btn-danger" onClick={() => revokeToken.mutate(t.id)} aria-label={`Revoke token ${t.name}`}>
                        Revoke
                      </button>
                    )}
                  </li>
                ))}
              </ul>
              <form
                className="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  createToken.mutate(String(new FormData(e.currentTarget).get('tokenName') ?? 'runner'));
                }}
              >
                <label>
                  Token name
                  <input name="tokenName" required maxLength={100} defaultValue="build-box" />
                </label>
                <button className="btn" type="submit">
                  Create runner token
                </button>
              </form>
              {newToken && (
                <p className="token-once" role="status">
                  Copy it now, it is shown once: <code>{newToken}</code>
                </p>
              )}
            </>
          )}
        </section>
      </main>
    </div>
  );
}

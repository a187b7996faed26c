'use client';
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Policy } from '../../protocol';
import { api, ApiRequestError } from './api';
import Header from './Header';
import { useRequireLogin } from './use-auth-redirect';
import { useWorld } from './use-world';
import { useRole } from './use-role';

const CATEGORIES = [
  ['merge', 'Merges and pushes to protected branches'],
  ['deps_add', 'Adding dependencies'],
  ['secrets', 'Reading a secret (av-secret NAME)'],
  ['deploy', 'Deploy commands'],
] as const;

const lines = (v: string) =>
  v
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** Org policy as a form (lists one per line), repository overrides as JSON, and secrets. */
export default function PolicyScreen() {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const qc = useQueryClient();
  const isAdmin = useRole().atLeast('admin');
  const policy = useQuery({ queryKey: ['policy'], queryFn: () => api<{ policy: Policy; defaults: Policy }>('/api/policy'), enabled: me.isSuccess });
  const secrets = useQuery({ queryKey: ['secrets'], queryFn: () => api<Array<{ name: string; updated_at: string; inject_into_sessions: boolean }>>('/api/secrets'), enabled: isAdmin });
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [repoId, setRepoId] = useState('');
  const [repoJson, setRepoJson] = useState('{}');

  const repoPolicy = useQuery({
    queryKey: ['repo-policy', repoId],
    queryFn: () => api<{ policy: Policy; effective: Policy }>(`/api/repos/${repoId}/policy`),
    enabled: !!repoId,
  });
  useEffect(() => {
    if (repoPolicy.data) setRepoJson(JSON.stringify(repoPolicy.data.policy, null, 2));
  }, [repoPolicy.data]);

  const fail = (e: unknown) => setMessage({ ok: false, text: e instanceof ApiRequestError ? e.message : String(e) });
  const saveOrg = useMutation({
    mutationFn: (p: Policy) => api<Policy>('/api/policy', { method: 'PUT', body: p }),
    onSuccess: () => {
      setMessage({ ok: true, text: 'Policy saved. New sessions run under it.' });
      void qc.invalidateQueries({ queryKey: ['policy'] });
    },
    onError: fail,
  });
  const saveRepo = useMutation({
    mutationFn: (body: unknown) => api<Policy>(`/api/repos/${repoId}/policy`, { method: 'PUT', body }),
    onSuccess: () => {
      setMessage({ ok: true, text: 'Repository overrides saved.' });
      void qc.invalidateQueries({ queryKey: ['repo-policy', repoId] });
    },
    onError: fail,
  });
  const saveSecret = useMutation({
    mutationFn: ({ name, value }: { name: string; value: string }) => api(`/api/secrets/${encodeURIComponent(name)}`, { method: 'PUT', body: { value } }),
    onSuccess: () => {
      setMessage({ ok: true, text: 'Secret saved. It is masked in every output; sessions reach it through an approved av-secret.' });
      void qc.invalidateQueries({ queryKey: ['secrets'] });
    },
    onError: fail,
  });
  const injectSecret = useMutation({
    mutationFn: ({ name, inject }: { name: string; inject: boolean }) =>
      api(`/api/secrets/${encodeURIComponent(name)}`, { method: 'PATCH', body: { inject_into_sessions: inject } }),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['secrets'] }),
    onError: (err: Error) => setMessage({ ok: false, text: err.message }),
  });
  const deleteSecret = useMutation({
    mutationFn: (name: string) => api(`/api/secrets/${encodeURIComponent(name)}`, { method: 'DELETE' }),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['secrets'] }),
    onError: fail,
  });

  if (!me.data || !world.data || !policy.data) return <main className="center-note">Loading policy…</main>;
  const p = { ...policy.data.defaults, ...policy.data.policy };

  function onSaveOrg(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const minutes = Number(f.get('timeout'));
    saveOrg.mutate({
      shell_allowlist: lines(String(f.get('allow') ?? '')),
      shell_denylist: lines(String(f.get('deny') ?? '')),
      forbidden_paths: lines(String(f.get('forbidden') ?? '')),
      allowed_paths: lines(String(f.get('allowed') ?? '')),
      protected_branches: lines(String(f.get('protected') ?? '')),
      deploy_patterns: lines(String(f.get('deploy') ?? '')),
      requires_approval_for: CATEGORIES.map(([c]) => c).filter((c) => f.get(`cat-${c}`) === 'on'),
      network: { mode: f.get('network') === 'restricted' ? 'restricted' : 'open', allow_hosts: lines(String(f.get('allow_hosts') ?? '')) },
      auto_merge: f.get('auto_merge') === 'on',
      approver_must_differ: f.get('four_eyes') === 'on',
      approval_timeout_ms: Math.round((Number.isFinite(minutes) ? minutes : 10) * 60_000),
    });
  }

  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <main className="settings">
        <h1>Policy and secrets</h1>
        {message && (
          <p className={message.ok ? 'ok-text' : 'error-line'} role={message.ok ? 'status' : 'alert'}>
            {message.text}
          </p>
        )}
        <form className="card policy-form" onSubmit={onSaveOrg} aria-labelledby="org-policy-title">
          <h2 id="org-policy-title">Organisation policy</h2>
          <p className="muted">Enforced on the runners, for people typing and for agents alike. Lists take one entry per line.</p>
          <fieldset disabled={!isAdmin}>
            <div className="policy-grid">
              <label>
                Allowed programs (empty = any)
                <textarea name="allow" rows={4} defaultValue={(p.shell_allowlist ?? []).join('\n')} />
              </label>
              <label>
                Denied commands
                <textarea name="deny" rows={4} defaultValue={(p.shell_denylist ?? []).join('\n')} />
              </label>
              <label>
                Forbidden paths (globs)
                <textarea name="forbidden" rows={4} defaultValue={(p.forbidden_paths ?? []).join('\n')} />
              </label>
              <label>
                Writable paths only (globs, empty = the whole repository)
                <textarea name="allowed" rows={4} defaultValue={(p.allowed_paths ?? []).join('\n')} />
              </label>
              <label>
                Protected branches
                <textarea name="protected" rows={2} defaultValue={(p.protected_branches ?? []).join('\n')} />
              </label>
              <label>
                Deploy commands
                <textarea name="deploy" rows={2} defaultValue={(p.deploy_patterns ?? []).join('\n')} />
              </label>
            </div>
            <p className="small">Ask an approver before:</p>
            {CATEGORIES.map(([c, label]) => (
              <label key={c} className="check">
                <input type="checkbox" name={`cat-${c}`} defaultChecked={(p.requires_approval_for ?? []).includes(c)} /> {label}
              </label>
            ))}
            <div className="row">
              <label>
                Network{' '}
                <select name="network" defaultValue={p.network?.mode ?? 'open'}>
                  <option value="open">open</option>
                  <option value="restricted">restricted (allowed hosts only)</option>
                </select>
              </label>
              <label>
                Allowed hosts when restricted (host, host:port or *.domain; repositories can add theirs)
                <textarea name="allow_hosts" rows={3} defaultValue={(p.network?.allow_hosts ?? []).join('\n')} />
              </label>
              <label>
                Unanswered approvals are denied after (minutes){' '}
                <input name="timeout" type="number" min={1} max={1440} defaultValue={Math.round((p.approval_timeout_ms ?? 600_000) / 60_000)} />
              </label>
              <label className="check">
                <input type="checkbox" name="auto_merge" defaultChecked={!!p.auto_merge} /> Allow merges to protected branches without approval
              </label>
              <label className="check">
                <input type="checkbox" name="four_eyes" defaultChecked={!!p.approver_must_differ} /> Four eyes: whoever started a session cannot approve its requests
              </label>
            </div>
            {isAdmin && (
              <button className="btn btn-primary" type="submit" disabled={saveOrg.isPending}>
                Save policy
              </button>
            )}
          </fieldset>
          {!isAdmin && <p className="muted">Only admins can change the policy.</p>}
        </form>

        <section className="card" aria-labelledby="repo-policy-title">
          <h2 id="repo-policy-title">Repository overrides</h2>
          <label>
            Repository{' '}
            <select value={repoId} onChange={(e) => setRepoId(e.target.value)}>
              <option value="">choose…</option>
              {world.data.repos.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
          {repoId && (
            <>
              <label className="block">
                Fields that replace the organisation&apos;s (JSON)
                <textarea className="json" rows={8} value={repoJson} onChange={(e) => setRepoJson(e.target.value)} disabled={!isAdmin} />
              </label>
              {isAdmin && (
                <button
                  className="btn"
                  type="button"
                  onClick={() => {
                    try {
                      saveRepo.mutate(JSON.parse(repoJson));
                    } catch (err) {
                      setMessage({ ok: false, text: `That is not JSON: ${(err as Error).message}` });
                    }
                  }}
                >
                  Save overrides
                </button>
              )}
              {repoPolicy.data && (
                <details>
                  <summary>Effective policy for new sessions here</summary>
                  <pre className="approval-diff">{JSON.stringify(repoPolicy.data.effective, null, 2)}</pre>
                </details>
              )}
            </>
          )}
        </section>

        {isAdmin && (
          <section className="card" aria-labelledby="secrets-title">
            <h2 id="secrets-title">Secrets</h2>
            <p className="muted">
              Encrypted at rest and masked in every output. A session reaches a secret only through an approved <code>av-secret NAME -- command</code>, unless you
              inject it. A saved value is never shown again.
            </p>
            <ul className="plain-list">
              {secrets.data?.map((s) => (
                <li key={s.name}>
                  <code>{s.name}</code> <span className="muted small">updated {new Date(s.updated_at).toLocaleString()}</span>{' '}
                  <label className="check">
                    <input
                      type="checkbox"
                      checked={s.inject_into_sessions}
                      onChange={(e) => injectSecret.mutate({ name: s.name, inject: e.target.checked })}
                      aria-label={`Inject ${s.name} into sessions`}
                    />{' '}
                    inject into sessions
                  </label>
                  {s.inject_into_sessions && (
                    <span className="error-line small" role="note">
                      {' '}
                      Every agent can read this value from its environment and send it anywhere its network allows; masking cannot stop a transformed copy.
                    </span>
                  )}{' '}
                  <button type="button" className="btn btn-small btn-danger" onClick={() => deleteSecret.mutate(s.name)} aria-label={`Delete secret ${s.name}`}>
                    Delete
                  </button>
                </li>
              ))}
            </ul>
            <form
              className="inline-form"
              onSubmit={(e) => {
                e.preventDefault();
                const f = new FormData(e.currentTarget);
                saveSecret.mutate({ name: String(f.get('name') ?? '').trim(), value: String(f.get('value') ?? '') });
                e.currentTarget.reset();
              }}
            >
              <label>
                Name
                <input name="name" required placeholder="DEPLOY_TOKEN" pattern="[A-Za-z_][A-Za-z0-9_]*" />
              </label>
              <label>
                Value
                <input name="value" type="password" required autoComplete="off" />
              </label>
              <button className="btn btn-primary" type="submit">
                Save secret
              </button>
            </form>
          </section>
        )}
      </main>
    </div>
  );
}

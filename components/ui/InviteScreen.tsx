'use client';
import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { InvitePreview } from '../../protocol';
import { api, ApiRequestError } from './api';
import { STRINGS } from './strings';

/** /invite/[token]: whom the link is for, then a name and password (or the existing account's password). */
export default function InviteScreen({ token }: { token: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const preview = useQuery({
    queryKey: ['invite', token],
    queryFn: () => api<InvitePreview>(`/api/invites/accept?token=${encodeURIComponent(token)}`),
    retry: false,
  });

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await api('/api/invites/accept', { body: { token, name: f.get('name') || preview.data?.email.split('@')[0], password: f.get('password') } });
      // A full load: the page's socket must be opened with the new login.
      window.location.href = '/';
    } catch (err) {
      setError(err instanceof ApiRequestError ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={submit} aria-labelledby="auth-title">
        <div className="auth-art" aria-hidden>
          <span>▲</span>
          <span>■</span>
          <span>▲</span>
        </div>
        <h1 id="auth-title">{STRINGS.acceptInviteTitle}</h1>
        {preview.isLoading && <p className="muted">Reading the invite…</p>}
        {preview.error && (
          <p className="error-line" role="alert">
            {preview.error.message}
          </p>
        )}
        {preview.data && (
          <>
            <p>
              <strong>{preview.data.email}</strong> is invited to <strong>{preview.data.org_name}</strong> as{' '}
              <strong>{preview.data.role}</strong>.
            </p>
            {preview.data.existing_account ? (
              <p className="muted small">This email has an account already: enter its password to join.</p>
            ) : (
              <label>
                Your name
                <input name="name" autoComplete="name" maxLength={100} required autoFocus />
              </label>
            )}
            <label>
              Password
              <input
                name="password"
                type="password"
                autoComplete={preview.data.existing_account ? 'current-password' : 'new-password'}
                minLength={8}
                required
              />
            </label>
            {!preview.data.existing_account && <p className="muted small">At least 8 characters.</p>}
            {error && (
              <p className="error-line" role="alert">
                {error}
              </p>
            )}
            <button type="submit" className="btn btn-primary" disabled={busy}>
              {busy ? 'Please wait…' : STRINGS.acceptInviteButton}
            </button>
          </>
        )}
      </form>
    </main>
  );
}

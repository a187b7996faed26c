'use client';
import { useEffect, useState, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { api, ApiRequestError } from './api';
import { STRINGS } from './strings';

/** The setup (first admin) and login forms share fields, errors and the redirect. */
export default function AuthForm({ mode }: { mode: 'setup' | 'login' }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The first-run link's token (…/setup?token=…), read after hydration: the page itself is static.
  const [linkToken, setLinkToken] = useState<string | null>(null);
  useEffect(() => {
    if (mode === 'setup') setLinkToken(new URLSearchParams(window.location.search).get('token'));
  }, [mode]);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      if (mode === 'setup') {
        await api('/api/setup', {
          body: {
            email: f.get('email'),
            password: f.get('password'),
            name: f.get('name') || undefined,
            org_name: f.get('org') || undefined,
            setup_token: linkToken ?? (f.get('setup_token') || undefined),
          },
        });
      } else {
        const r = await api<{ must_change_password: boolean }>('/api/auth/login', { body: { email: f.get('email'), password: f.get('password') } });
        if (r.must_change_password) return router.replace('/password');
      }
      router.replace('/');
    } catch (err) {
      setError(err instanceof ApiRequestError ? err.message : String(err));
      if (err instanceof ApiRequestError && err.code === 'CONFLICT' && mode === 'setup') router.replace('/login');
    } finally {
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
        <h1 id="auth-title">{mode === 'setup' ? STRINGS.setupTitle : STRINGS.loginTitle}</h1>
        {mode === 'setup' && <p className="muted">This account becomes the admin of this installation.</p>}
        {mode === 'setup' && !linkToken && (
          <label>
            {STRINGS.setupTokenLabel}
            <input name="setup_token" autoComplete="off" required maxLength={200} />
            <span className="muted small">{STRINGS.setupTokenHint}</span>
          </label>
        )}
        {mode === 'setup' && (
          <>
            <label>
              Your name
              <input name="name" autoComplete="name" maxLength={100} />
            </label>
            <label>
              Organisation name
              <input name="org" placeholder="My Village" maxLength={100} />
            </label>
          </>
        )}
        <label>
          Email
          <input name="email" type="email" autoComplete="email" required autoFocus />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete={mode === 'setup' ? 'new-password' : 'current-password'}
            minLength={mode === 'setup' ? 8 : 1}
            required
          />
        </label>
        {mode === 'setup' && <p className="muted small">At least 8 characters.</p>}
        {error && (
          <p className="error-line" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Please wait…' : mode === 'setup' ? STRINGS.setupButton : STRINGS.loginButton}
        </button>
      </form>
    </main>
  );
}

'use client';
import { useState, type FormEvent } from 'react';
import { api, ApiRequestError } from './api';
import { STRINGS } from './strings';
import { useRequireLogin } from './use-auth-redirect';

/** /password: replace a one-time password (required) or change one's own (any time). */
export default function ChangePasswordScreen() {
  const me = useRequireLogin({ allowPendingPassword: true });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    if (f.get('new_password') !== f.get('confirm')) return setError('The two new passwords differ.');
    setBusy(true);
    setError(null);
    try {
      await api('/api/auth/password', { body: { current_password: f.get('current_password'), new_password: f.get('new_password') } });
      // Every other login ended, this one has a new cookie: load the village afresh with it.
      window.location.href = '/';
    } catch (err) {
      setError(err instanceof ApiRequestError ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={submit} aria-labelledby="auth-title">
        <h1 id="auth-title">{STRINGS.changePasswordTitle}</h1>
        {me.data?.must_change_password && <p className="warn-line">{STRINGS.mustChangePassword}</p>}
        <label>
          Current password
          <input name="current_password" type="password" autoComplete="current-password" required autoFocus />
        </label>
        <label>
          New password
          <input name="new_password" type="password" autoComplete="new-password" minLength={8} required />
        </label>
        <label>
          New password again
          <input name="confirm" type="password" autoComplete="new-password" minLength={8} required />
        </label>
        {error && (
          <p className="error-line" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Please wait…' : STRINGS.changePasswordButton}
        </button>
      </form>
    </main>
  );
}

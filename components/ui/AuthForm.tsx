'use client';
import { useEffect, useState } from 'react';
import { useRouter } from 'next/navigation';
import { api, ApiRequestError } from './api';
import { AuthCard } from './AuthCard';
import { STRINGS } from './strings';

/** The setup (first admin) and login forms share fields, errors and the redirect. */
export default function AuthForm({ mode }: { mode: 'setup' | 'login' }) {
  const router = useRouter();
  // The first-run link's token (…/setup?token=…), read after hydration: the page itself is static.
  const [linkToken, setLinkToken] = useState<string | null>(null);
  useEffect(() => {
    if (mode === 'setup') setLinkToken(new URLSearchParams(window.location.search).get('token'));
  }, [mode]);

  /** Signs up or in; says where to go next. */
  async function submit(f: FormData): Promise<string> {
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
      return '/';
    }
    const r = await api<{ must_change_password: boolean }>('/api/auth/login', { body: { email: f.get('email'), password: f.get('password') } });
    return r.must_change_password ? '/password' : '/';
  }

  return (
    <AuthCard
      title={mode === 'setup' ? STRINGS.setupTitle : STRINGS.loginTitle}
      submitLabel={mode === 'setup' ? STRINGS.setupButton : STRINGS.loginButton}
      action={submit}
      onSuccess={(next) => router.replace(next)}
      onError={(err) => {
        // The installation has its admin already: signing in is what is left.
        if (err instanceof ApiRequestError && err.code === 'CONFLICT' && mode === 'setup') router.replace('/login');
      }}
    >
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
    </AuthCard>
  );
}

'use client';
import { useQuery } from '@tanstack/react-query';
import type { InvitePreview } from '../../protocol';
import { api } from './api';
import { AuthCard } from './AuthCard';
import { STRINGS } from './strings';

/** /invite/[token]: whom the link is for, then a name and password (or the existing account's password). */
export default function InviteScreen({ token }: { token: string }) {
  const preview = useQuery({
    queryKey: ['invite', token],
    queryFn: () => api<InvitePreview>(`/api/invites/accept?token=${encodeURIComponent(token)}`),
    retry: false,
  });

  async function accept(f: FormData): Promise<void> {
    await api('/api/invites/accept', { body: { token, name: f.get('name') || preview.data?.email.split('@')[0], password: f.get('password') } });
  }

  return (
    <AuthCard
      title={STRINGS.acceptInviteTitle}
      submitLabel={STRINGS.acceptInviteButton}
      action={accept}
      // A full load: the page's socket must be opened with the new login.
      onSuccess={() => (window.location.href = '/')}
      ready={!!preview.data}
    >
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
        </>
      )}
    </AuthCard>
  );
}

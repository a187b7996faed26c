'use client';
import { api } from './api';
import { AuthCard } from './AuthCard';
import { STRINGS } from './strings';
import { useRequireLogin } from './use-auth-redirect';

/** /password: replace a one-time password (required) or change one's own (any time). */
export default function ChangePasswordScreen() {
  const me = useRequireLogin({ allowPendingPassword: true });

  async function change(f: FormData): Promise<void> {
    if (f.get('new_password') !== f.get('confirm')) throw new Error('The two new passwords differ.');
    await api('/api/auth/password', { body: { current_password: f.get('current_password'), new_password: f.get('new_password') } });
  }

  return (
    <AuthCard
      title={STRINGS.changePasswordTitle}
      submitLabel={STRINGS.changePasswordButton}
      action={change}
      // Every other login ended, this one has a new cookie: load the village afresh with it.
      onSuccess={() => (window.location.href = '/')}
      art={false}
    >
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
    </AuthCard>
  );
}

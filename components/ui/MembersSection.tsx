'use client';
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { RoleSchema, type InviteSummary, type Member, type Role } from '../../protocol';
import { api, ApiRequestError } from './api';
import { STRINGS } from './strings';

const MEMBERS_KEY = ['members'] as const;
const ROLES = RoleSchema.options;

const message = (e: unknown) => (e instanceof ApiRequestError ? e.message : String(e));

/** Settings → Members (admins): roles, removal, invite links and one-time-password accounts. */
export default function MembersSection({ meId }: { meId: string }) {
  const qc = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState<{ kind: 'link' | 'password'; email: string; value: string; link?: string } | null>(null);
  const members = useQuery({
    queryKey: MEMBERS_KEY,
    queryFn: () => api<{ members: Member[]; invites: InviteSummary[] }>('/api/members'),
  });
  const done = {
    onSuccess: () => {
      setError(null);
      void qc.invalidateQueries({ queryKey: MEMBERS_KEY });
    },
    onError: (e: unknown) => setError(message(e)),
  };
  const changeRole = useMutation({
    mutationFn: (v: { userId: string; role: Role }) => api<Member>(`/api/members/${v.userId}`, { method: 'PATCH', body: { role: v.role } }),
    ...done,
  });
  const remove = useMutation({ mutationFn: (userId: string) => api(`/api/members/${userId}`, { method: 'DELETE' }), ...done });
  const revokeInvite = useMutation({ mutationFn: (id: string) => api(`/api/invites/${id}`, { method: 'DELETE' }), ...done });
  const invite = useMutation({
    mutationFn: (body: { email: string; role: Role }) => api<{ invite: InviteSummary; token: string }>('/api/invites', { body }),
    ...done,
    onSuccess: (r) => {
      done.onSuccess();
      setShown({ kind: 'link', email: r.invite.email, value: `${window.location.origin}/invite/${r.token}` });
    },
  });
  const create = useMutation({
    mutationFn: (body: { email: string; name: string; role: Role }) => api<{ member: Member; one_time_password: string }>('/api/members', { body }),
    ...done,
    onSuccess: (r) => {
      done.onSuccess();
      setShown({ kind: 'password', email: r.member.email, value: r.one_time_password, link: `${window.location.origin}/invite/${r.one_time_password}` });
    },
  });

  function onInvite(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    // The button that was pressed says how: an invite link or a one-time password.
    const f = new FormData(e.currentTarget, (e.nativeEvent as SubmitEvent).submitter);
    const body = { email: String(f.get('email') ?? ''), role: String(f.get('role')) as Role };
    if (f.get('how') === 'password') create.mutate({ ...body, name: String(f.get('name') || body.email.split('@')[0]) });
    else invite.mutate(body);
  }

  return (
    <section className="card members" aria-labelledby="members-title">
      <h2 id="members-title">{STRINGS.membersTitle}</h2>
      <p className="muted">Roles: viewer (watch) &lt; operator (spawn, type, stop) &lt; approver (allow or deny) &lt; admin (members, runners, audit).</p>
      {members.isLoading && <p className="muted">Loading members…</p>}
      <table className="pixel-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col" aria-label="Actions" />
          </tr>
        </thead>
        <tbody>
          {members.data?.members.map((m) => (
            <tr key={m.user_id} data-member-email={m.email}>
              <td>
                {m.name}
                {m.user_id === meId && <span className="muted small"> (you)</span>}
                {m.must_change_password && <span className="muted small"> · one-time password not changed yet</span>}
              </td>
              <td>{m.email}</td>
              <td>
                <select
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  disabled={changeRole.isPending}
                  onChange={(e) => changeRole.mutate({ userId: m.user_id, role: e.target.value as Role })}
                >
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </td>
              <td>
                <button
                  type="button"
                  className="btn btn-small btn-danger"
                  aria-label={`Remove ${m.email}`}
                  onClick={() => {
                    if (window.confirm(`Remove ${m.email} from this organisation?`)) remove.mutate(m.user_id);
                  }}
                >
                  {STRINGS.removeMember}
                </button>
              </td>
            </tr>
          ))}
          {members.data?.invites.map((i) => (
            <tr key={i.id} className="invite-row" data-invite-email={i.email} data-invite-kind={i.kind}>
              <td className="muted">{i.kind === 'account' ? STRINGS.pendingFirstSignIn : 'invited'}</td>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td>
                <span className="muted small">until {new Date(i.expires_at).toLocaleDateString()} </span>
                <button type="button" className="btn btn-small" aria-label={`Revoke invite for ${i.email}`} onClick={() => revokeInvite.mutate(i.id)}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {error && (
        <p className="error-line" role="alert">
          {error}
        </p>
      )}
      <h3>Add a member</h3>
      <form className="inline-form" onSubmit={onInvite}>
        <label>
          Member email
          <input name="email" type="email" required maxLength={254} />
        </label>
        <label>
          Member name (for a one-time password)
          <input name="name" maxLength={100} />
        </label>
        <label>
          Member role
          <select name="role" defaultValue="viewer">
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button className="btn btn-primary" type="submit" name="how" value="link" disabled={invite.isPending}>
          {STRINGS.inviteButton}
        </button>
        <button className="btn" type="submit" name="how" value="password" disabled={create.isPending}>
          {STRINGS.createMemberButton}
        </button>
      </form>
      {shown && (
        <div className="token-once" role="status" data-testid={shown.kind === 'link' ? 'invite-link' : 'one-time-password'}>
          <p>
            {shown.kind === 'link' ? STRINGS.inviteLinkOnce : STRINGS.oneTimePasswordOnce} <strong>{shown.email}</strong>
          </p>
          <code>{shown.value}</code>
          {shown.link && (
            <p className="muted small">
              {STRINGS.oneTimePasswordExisting} <code data-testid="one-time-password-link">{shown.link}</code>
            </p>
          )}
        </div>
      )}
    </section>
  );
}

'use client';
import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { AUDIT_ACTIONS, type AuditEventRow } from '../../protocol';
import { api } from './api';
import Header from './Header';
import { STRINGS } from './strings';
import { useRequireLogin } from './use-auth-redirect';

type Filter = { action: string; actor: string; from: string; to: string };
const EMPTY: Filter = { action: '', actor: '', from: '', to: '' };

const query = (f: Filter) => new URLSearchParams(Object.entries(f).filter(([, v]) => v !== '')).toString();

/** The audit page (admins): logins, members, tokens, runners, approvals, policy blocks; filter and export. */
export default function AuditScreen() {
  const me = useRequireLogin();
  const isAdmin = me.data?.role === 'admin';
  const [filter, setFilter] = useState<Filter>(EMPTY);
  const events = useQuery({
    queryKey: ['audit', filter],
    queryFn: () => api<AuditEventRow[]>(`/api/audit?${query(filter)}`),
    enabled: isAdmin,
  });

  if (!me.data) return <main className="center-note">Loading…</main>;

  function onFilter(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setFilter({ action: String(f.get('action') ?? ''), actor: String(f.get('actor') ?? '').trim(), from: String(f.get('from') ?? ''), to: String(f.get('to') ?? '') });
  }

  return (
    <div className="app-shell">
      <Header me={me.data} />
      <main className="settings audit">
        <h1>{STRINGS.auditTitle}</h1>
        {!isAdmin ? (
          <p className="card admins-only" role="alert">
            {STRINGS.adminsOnly}
          </p>
        ) : (
          <>
            <form className="inline-form card" onSubmit={onFilter} aria-label="Audit filter">
              <label>
                Action
                <select name="action" defaultValue="">
                  <option value="">any</option>
                  {AUDIT_ACTIONS.map((a) => (
                    <option key={a} value={a}>
                      {a}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Actor
                <input name="actor" placeholder="email, runner:name or system" maxLength={254} />
              </label>
              <label>
                From
                <input name="from" type="date" />
              </label>
              <label>
                To
                <input name="to" type="date" />
              </label>
              <button className="btn btn-primary" type="submit">
                {STRINGS.auditFilter}
              </button>
              <a className="btn" href={`/api/audit.csv?${query(filter)}`} download>
                {STRINGS.auditExport}
              </a>
            </form>
            {events.error && (
              <p className="error-line" role="alert">
                {events.error.message}
              </p>
            )}
            <table className="pixel-table audit-table">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Detail</th>
                  <th scope="col">IP</th>
                </tr>
              </thead>
              <tbody>
                {events.data?.map((e) => (
                  <tr key={e.id} data-action={e.action}>
                    <td className="nowrap">{new Date(e.ts).toLocaleString()}</td>
                    <td>{e.actor}</td>
                    <td>
                      <span className={`audit-action audit-${e.action.split('.')[0]}`}>{e.action}</span>
                    </td>
                    <td>{e.target}</td>
                    <td className="audit-detail">{Object.keys(e.detail).length ? JSON.stringify(e.detail) : ''}</td>
                    <td className="muted">{e.ip ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {events.data && events.data.length === 0 && <p className="muted">No events match.</p>}
          </>
        )}
      </main>
    </div>
  );
}

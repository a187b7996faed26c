'use client';
import Link from 'next/link';
import type { Me, RunnerSummary } from '../../protocol';
import { api } from './api';
import { STRINGS } from './strings';

export default function Header({ me, runners }: { me: Me; runners?: RunnerSummary[] }) {
  const online = runners?.filter((r) => r.online).length ?? 0;
  return (
    <header className="app-header">
      <Link href="/" className="brand">
        <span className="brand-mark" aria-hidden>▲</span> {STRINGS.appName}
      </Link>
      <span className="org-name" title="Organisation">{me.org.name}</span>
      {runners && (
        <span className={`runner-status ${online ? 'ok' : 'bad'}`} role="status">
          {online ? `${online} runner${online === 1 ? '' : 's'} online` : 'no runner online'}
        </span>
      )}
      <span className="spacer" />
      <Link href="/settings" className="btn btn-small">
        Settings
      </Link>
      <span className="user" title={me.user.email}>
        {me.user.name} · {me.role}
      </span>
      <button
        type="button"
        className="btn btn-small"
        onClick={async () => {
          await api('/api/auth/logout', { method: 'POST' });
          window.location.href = '/login';
        }}
      >
        Log out
      </button>
    </header>
  );
}

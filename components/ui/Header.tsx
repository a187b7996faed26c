'use client';
import Link from 'next/link';
import type { Me, RunnerSummary } from '../../protocol';
import { useApprovals } from '../approvals/use-approvals';
import NotificationBell from '../notifications/NotificationBell';
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
      {me.role === 'admin' && runners && <RunnerSecurityAlerts runners={runners} />}
      <span className="spacer" />
      <NotificationBell />
      <ApprovalsBadge />
      <Link href="/patrols" className="btn btn-small">
        {STRINGS.patrolsLink}
      </Link>
      <Link href="/workshop" className="btn btn-small">
        {STRINGS.workshopLink}
      </Link>
      <Link href="/quests" className="btn btn-small">
        Quests
      </Link>
      <Link href="/policy" className="btn btn-small">
        Policy
      </Link>
      {me.role === 'admin' && (
        <>
          <Link href="/usage" className="btn btn-small">
            {STRINGS.usageLink}
          </Link>
          <Link href="/billing" className="btn btn-small">
            {STRINGS.billingLink}
          </Link>
          <Link href="/audit" className="btn btn-small">
            {STRINGS.auditLink}
          </Link>
        </>
      )}
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

/** The header's approvals badge: how many requests wait, one click from the inbox. */
function ApprovalsBadge() {
  const approvals = useApprovals();
  const pending = approvals.data?.filter((a) => a.state === 'pending').length ?? 0;
  return (
    <Link href="/approvals" className={`approvals-badge${pending ? ' has-pending' : ''}`} aria-label={`Approvals: ${pending} waiting`}>
      Approvals {pending}
    </Link>
  );
}

/** Admins see a runner's security alert (a refused or fencing second connection) until they dismiss it. */
function RunnerSecurityAlerts({ runners }: { runners: RunnerSummary[] }) {
  const flagged = runners.filter((r) => r.security_alert);
  return (
    <>
      {flagged.map((r) => (
        <span key={r.id} className="runner-alert" role="alert" title={r.security_alert!.message}>
          ⚠ runner {r.name}: {r.security_alert!.message}
          <button type="button" className="btn btn-small" onClick={() => void api(`/api/runners/${r.id}/alert`, { method: 'DELETE' }).catch(() => undefined)}>
            Dismiss
          </button>
        </span>
      ))}
    </>
  );
}

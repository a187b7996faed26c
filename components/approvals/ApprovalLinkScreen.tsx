'use client';
import { useEffect, useState } from 'react';
import type { ApprovalSummary } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import BlastRadius from './BlastRadius';

const message = (e: unknown) => (e instanceof ApiRequestError ? e.message : String(e));

/**
 * A signed one-time link's page: shows the request, then Allow or Deny as the approver the link
 * was made for. The token rides in the URL's #fragment, so it never reaches a server log or a
 * Referer; nothing is decided by opening the page, only by the click.
 */
export default function ApprovalLinkScreen() {
  const [token, setToken] = useState<string | null>(null);
  const [approval, setApproval] = useState<ApprovalSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const t = window.location.hash.slice(1);
    setToken(t);
    if (!t) {
      setError('This link has no token.');
      return;
    }
    api<ApprovalSummary>('/api/approval-links/preview', { body: { token: t } }).then(setApproval, (e) => setError(message(e)));
  }, []);
  async function decide(decision: 'allow' | 'deny') {
    setBusy(true);
    try {
      setApproval(await api<ApprovalSummary>('/api/approval-links/decide', { body: { token, decision } }));
      setError(null);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main className="settings approval-link">
      <h1>Approval request</h1>
      {approval && (
        <article className={`approval-card risk-${approval.risk}`} data-state={approval.state} aria-label={`Approval: ${approval.summary}`}>
          <p className="approval-summary">{approval.summary}</p>
          <p>
            <code>{approval.context.command}</code>
          </p>
          <p className="small">Rule: {approval.context.rule}</p>
          {approval.context.diff_stat && <pre className="approval-diff">{approval.context.diff_stat}</pre>}
          <BlastRadius context={approval.context} />
          {approval.state === 'pending' ? (
            <div className="approval-actions">
              <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void decide('allow')}>
                Allow
              </button>
              <button type="button" className="btn btn-danger" disabled={busy} onClick={() => void decide('deny')}>
                Deny
              </button>
            </div>
          ) : (
            <p role="status">
              {approval.state === 'allowed' ? 'Allowed' : approval.state === 'denied' ? 'Denied' : 'Expired'}
              {approval.decided_by ? ` by ${approval.decided_by}` : ''}
            </p>
          )}
        </article>
      )}
      {error && (
        <p className="error-line" role="alert">
          {error}
        </p>
      )}
      {!approval && !error && <p className="muted">Checking the link…</p>}
    </main>
  );
}

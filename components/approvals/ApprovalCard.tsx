'use client';
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ApprovalSummary } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import BlastRadius from './BlastRadius';
import { APPROVALS_KEY } from './use-approvals';

const CATEGORY: Record<ApprovalSummary['category'], string> = {
  merge: 'Merge',
  deps_add: 'New dependency',
  secrets: 'Secret access',
  deploy: 'Deploy',
  dta: 'DTA apply',
};

/** Exactly what will happen if allowed, with Allow / Deny and a note. */
export default function ApprovalCard({ approval: a, canDecide }: { approval: ApprovalSummary; canDecide: boolean }) {
  const qc = useQueryClient();
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const decide = useMutation({
    mutationFn: (decision: 'allow' | 'deny') =>
      api<ApprovalSummary>(`/api/approvals/${a.id}/decide`, { body: { decision, ...(note.trim() ? { note: note.trim() } : {}) } }),
    onSuccess: () => {
      setError(null);
      void qc.invalidateQueries({ queryKey: APPROVALS_KEY });
    },
    onError: (e) => setError(e instanceof ApiRequestError ? e.message : String(e)),
  });
  const c = a.context;
  const pending = a.state === 'pending';
  return (
    <article className={`approval-card risk-${a.risk}`} aria-label={`Approval: ${a.summary}`} data-approval-id={a.id} data-state={a.state}>
      <header className="approval-head">
        <span className="approval-category">{CATEGORY[a.category]}</span>
        <span className={`state-pill risk-pill-${a.risk}`}>{a.risk} risk</span>
        <span className="muted small">{a.session_title}</span>
      </header>
      <p className="approval-summary">{a.summary}</p>
      <dl className="approval-context">
        <dt>Command</dt>
        <dd>
          <code>{c.command}</code>
        </dd>
        {c.branch && (
          <>
            <dt>Branch</dt>
            <dd>
              {c.branch}
              {c.target_branch ? ` → ${c.target_branch}` : ''}
            </dd>
          </>
        )}
        {c.changed_files !== undefined && (
          <>
            <dt>Changed files</dt>
            <dd>{c.changed_files}</dd>
          </>
        )}
        <dt>Rule</dt>
        <dd>{c.rule}</dd>
        {c.cwd && (
          <>
            <dt>In</dt>
            <dd className="small">{c.cwd}</dd>
          </>
        )}
      </dl>
      {c.diff_stat && <pre className="approval-diff">{c.diff_stat}</pre>}
      <BlastRadius context={c} />
      {pending ? (
        canDecide ? (
          <div className="approval-actions">
            <label className="sr-only" htmlFor={`note-${a.id}`}>
              Note
            </label>
            <input id={`note-${a.id}`} placeholder="Note (optional)" value={note} onChange={(e) => setNote(e.target.value)} maxLength={2000} />
            <button type="button" className="btn btn-primary" disabled={decide.isPending} onClick={() => decide.mutate('allow')}>
              Allow
            </button>
            <button type="button" className="btn btn-danger" disabled={decide.isPending} onClick={() => decide.mutate('deny')}>
              Deny
            </button>
            <span className="muted small">expires {new Date(a.expires_at).toLocaleTimeString()}</span>
          </div>
        ) : (
          <p className="muted small">Waiting for an approver.</p>
        )
      ) : (
        <p className="small" role="status">
          {a.state === 'allowed' ? 'Allowed' : a.state === 'denied' ? 'Denied' : 'Expired (denied)'}
          {a.decided_by ? ` by ${a.decided_by}` : ''}
          {a.note ? `: “${a.note}”` : ''}
          {a.reason === 'runner_restarted' ? ' — the runner restarted; nothing ran' : ''}
        </p>
      )}
      {error && (
        <p className="error-line" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}

'use client';
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { PolicySuggestionSummary } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import { APPROVALS_KEY } from './use-approvals';

export const SUGGESTIONS_KEY = ['policy-suggestions'] as const;

/**
 * "Always allow this": offered after repeated allows of one kind, shown as a diff of the org
 * policy; only an admin applies it. Refreshed whenever an approval changes (an allow may offer one).
 */
export default function PolicySuggestions({ isAdmin, approvalsVersion }: { isAdmin: boolean; approvalsVersion: number }) {
  const list = useQuery({ queryKey: [...SUGGESTIONS_KEY, approvalsVersion], queryFn: () => api<PolicySuggestionSummary[]>('/api/policy-suggestions') });
  const offered = (list.data ?? []).filter((s) => s.state === 'offered');
  if (!offered.length) return null;
  return (
    <section aria-label="Suggested policy rules">
      <h2 className="panel-title">Suggested rules ({offered.length})</h2>
      {offered.map((s) => (
        <Suggestion key={s.id} s={s} isAdmin={isAdmin} />
      ))}
    </section>
  );
}

function Suggestion({ s, isAdmin }: { s: PolicySuggestionSummary; isAdmin: boolean }) {
  const qc = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const decide = useMutation({
    mutationFn: (decision: 'apply' | 'dismiss') => api<PolicySuggestionSummary>(`/api/policy-suggestions/${s.id}`, { body: { decision } }),
    onSuccess: () => {
      setError(null);
      void qc.invalidateQueries({ queryKey: SUGGESTIONS_KEY });
      void qc.invalidateQueries({ queryKey: APPROVALS_KEY });
    },
    onError: (e) => setError(e instanceof ApiRequestError ? e.message : String(e)),
  });
  return (
    <article className="approval-card policy-suggestion" data-suggestion-id={s.id} aria-label={`Suggested rule: always allow ${s.rule}`}>
      <p>
        Allowed {s.allow_count} times: <strong>{s.rule}</strong>. Always allow this?
      </p>
      <pre className="policy-diff" aria-label="Policy diff">
        {s.diff
          .split('\n')
          .filter((l) => !l.startsWith('====='))
          .map((l, i) => (
            <span key={i} className={l.startsWith('+') && !l.startsWith('+++') ? 'added' : l.startsWith('-') && !l.startsWith('---') ? 'deleted' : undefined}>
              {l}
              {'\n'}
            </span>
          ))}
      </pre>
      {isAdmin ? (
        <div className="approval-actions">
          <button type="button" className="btn btn-primary" disabled={decide.isPending} onClick={() => decide.mutate('apply')}>
            Apply rule
          </button>
          <button type="button" className="btn" disabled={decide.isPending} onClick={() => decide.mutate('dismiss')}>
            Dismiss
          </button>
        </div>
      ) : (
        <p className="muted small">An admin can apply this rule.</p>
      )}
      {error && (
        <p className="error-line" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}

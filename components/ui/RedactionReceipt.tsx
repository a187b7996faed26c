'use client';
import { useQuery } from '@tanstack/react-query';
import type { SessionRedactionRow } from '../../protocol';
import { api } from './api';
import { STRINGS } from './strings';

/** How often a live session's receipt is asked for again (it grows while the session prints). */
const LIVE_REFRESH_MS = 5_000;

/**
 * The session's redaction receipt (issue 10): which rules and which org secrets (by name) were
 * masked, how often, and between which seqs — so an admin can see that masking happened and where.
 */
export default function RedactionReceipt({ sessionId, state, live }: { sessionId: string; state: string; live: boolean }) {
  const q = useQuery({
    queryKey: ['redactions', sessionId, state],
    queryFn: () => api<SessionRedactionRow[]>(`/api/sessions/${sessionId}/redactions`),
    refetchInterval: live ? LIVE_REFRESH_MS : false,
  });
  const rows = q.data ?? [];
  return (
    <>
      <h3 className="panel-title">{STRINGS.redactionsTitle}</h3>
      {rows.length === 0 ? (
        <p className="muted small">{q.isError ? STRINGS.redactionsUnavailable : STRINGS.noRedactions}</p>
      ) : (
        <ul className="diff-list" data-testid="session-redactions">
          {rows.map((r) => (
            <li key={`${r.source}:${r.rule}:${r.secret_name ?? ''}`}>
              <span className="diff-path">{r.secret_name ? `${STRINGS.orgSecret} ${r.secret_name}` : r.rule}</span>
              <span className="muted">×{r.count}</span>
              <span className="muted small">
                seq {r.first_seq === r.last_seq ? r.first_seq : `${r.first_seq}–${r.last_seq}`} · {r.source === 'runner' ? STRINGS.maskedByRunner : STRINGS.maskedByControlPlane}
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

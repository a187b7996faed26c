'use client';
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { NOTIFICATION_KINDS, type NotificationKind, type NotificationSettings, type OutgoingWebhookSummary, type WebhookDeliverySummary } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import { EnableBrowserNotifications } from './NotificationBell';
import { NOTIFY_SETTINGS_KEY, useNotificationSettings } from './use-notifications';

export const KIND_LABEL: Record<NotificationKind, string> = {
  approval_waiting: 'An approval waits for me',
  session_waiting_input: 'My session waits for input',
  patrol_red: 'A patrol turns red',
  quest_step_failed: 'A quest step fails',
};

const WEBHOOKS_KEY = ['org-webhooks'] as const;
const DELIVERIES_KEY = ['org-webhooks', 'deliveries'] as const;

/** Settings page: what I am told about, and (admins) the org's outgoing webhooks with their delivery log. */
export default function NotificationSettingsSection({ isAdmin }: { isAdmin: boolean }) {
  return (
    <>
      <MySettings />
      {isAdmin && <OrgWebhooks />}
    </>
  );
}

function MySettings() {
  const qc = useQueryClient();
  const settings = useNotificationSettings();
  const save = useMutation({
    mutationFn: (next: NotificationSettings) => api<NotificationSettings>('/api/notifications/settings', { method: 'PUT', body: next }),
    onSuccess: (s) => qc.setQueryData(NOTIFY_SETTINGS_KEY, s),
  });
  const s = settings.data;
  return (
    <section className="card" aria-labelledby="notify-title">
      <h2 id="notify-title">Notifications</h2>
      {!s ? (
        <p className="muted">Loading…</p>
      ) : (
        <>
          {NOTIFICATION_KINDS.map((k) => (
            <label key={k} className="check-row">
              <input
                type="checkbox"
                checked={s.kinds.includes(k)}
                onChange={(e) => save.mutate({ ...s, kinds: e.target.checked ? [...s.kinds, k] : s.kinds.filter((x) => x !== k) })}
              />{' '}
              {KIND_LABEL[k]}
            </label>
          ))}
          <label className="check-row">
            <input type="checkbox" checked={s.browser} onChange={(e) => save.mutate({ ...s, browser: e.target.checked })} /> Browser notifications
          </label>
          <EnableBrowserNotifications />
        </>
      )}
    </section>
  );
}

function OrgWebhooks() {
  const qc = useQueryClient();
  const hooks = useQuery({ queryKey: WEBHOOKS_KEY, queryFn: () => api<OutgoingWebhookSummary[]>('/api/org-webhooks') });
  const deliveries = useQuery({ queryKey: DELIVERIES_KEY, queryFn: () => api<WebhookDeliverySummary[]>('/api/org-webhooks/deliveries') });
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const add = useMutation({
    mutationFn: (body: { url: string; kinds: NotificationKind[] }) => api<OutgoingWebhookSummary>('/api/org-webhooks', { body }),
    onSuccess: (w) => {
      setSecret(w.secret ?? null);
      setError(null);
      void qc.invalidateQueries({ queryKey: WEBHOOKS_KEY });
    },
    onError: (e) => setError(e instanceof ApiRequestError ? e.message : String(e)),
  });
  const remove = useMutation({ mutationFn: (id: string) => api(`/api/org-webhooks/${id}`, { method: 'DELETE' }), onSuccess: () => void qc.invalidateQueries({ queryKey: WEBHOOKS_KEY }) });
  function onAdd(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    add.mutate({ url: String(f.get('url') ?? ''), kinds: NOTIFICATION_KINDS.filter((k) => f.get(`kind-${k}`) === 'on') });
  }
  return (
    <section className="card" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Outgoing webhooks</h2>
      <p className="muted small">Slack-compatible JSON, signed with HMAC-SHA256 in X-AV-Signature-256, retried with backoff.</p>
      <ul className="plain-list">
        {(hooks.data ?? []).map((w) => (
          <li key={w.id}>
            <code>{w.url}</code> — {w.kinds.map((k) => KIND_LABEL[k]).join(', ')}{' '}
            <button type="button" className="btn btn-small" onClick={() => remove.mutate(w.id)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={onAdd} className="inline-form">
        <label>
          Webhook URL <input name="url" type="url" required placeholder="https://hooks.slack.com/services/…" />
        </label>
        {NOTIFICATION_KINDS.map((k) => (
          <label key={k} className="check-row">
            <input type="checkbox" name={`kind-${k}`} defaultChecked={k === 'approval_waiting'} /> {KIND_LABEL[k]}
          </label>
        ))}
        <button type="submit" className="btn btn-small" disabled={add.isPending}>
          Add webhook
        </button>
      </form>
      {secret && (
        <p className="small" role="status">
          Signing secret (shown once): <code>{secret}</code>
        </p>
      )}
      {error && (
        <p className="error-line" role="alert">
          {error}
        </p>
      )}
      <h3 className="small">Delivery log</h3>
      <button type="button" className="btn btn-small" onClick={() => void qc.invalidateQueries({ queryKey: DELIVERIES_KEY })}>
        Refresh
      </button>
      <table className="delivery-log">
        <thead>
          <tr>
            <th>When</th>
            <th>Event</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Last answer</th>
          </tr>
        </thead>
        <tbody>
          {(deliveries.data ?? []).map((d) => (
            <tr key={d.id} data-state={d.state}>
              <td>{new Date(d.created_at).toLocaleString()}</td>
              <td>{d.kind}</td>
              <td>{d.state}</td>
              <td>{d.attempts}</td>
              <td>{d.last_status ?? d.last_error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

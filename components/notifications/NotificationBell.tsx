'use client';
import Link from 'next/link';
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { NotificationSettings, NotificationSummary } from '../../protocol';
import { api } from '../ui/api';
import { browserPermission, INBOX_KEY, NOTIFY_SETTINGS_KEY, useInbox, useNotificationSettings } from './use-notifications';

/** The header's bell: unread count, and the inbox one click away. */
export default function NotificationBell() {
  const inbox = useInbox();
  const [open, setOpen] = useState(false);
  const unread = inbox.data?.unread ?? 0;
  return (
    <span className="notification-bell">
      <button type="button" className={`btn btn-small bell${unread ? ' has-unread' : ''}`} aria-expanded={open} aria-label={`Notifications: ${unread} unread`} onClick={() => setOpen((o) => !o)}>
        <PixelBell /> {unread}
      </button>
      {open && <InboxPanel items={inbox.data?.items ?? []} onClose={() => setOpen(false)} />}
    </span>
  );
}

/** A bell drawn in pixels (an emoji would depend on the system's fonts, and is missing on many). */
function PixelBell() {
  return (
    <svg width="12" height="12" viewBox="0 0 12 12" aria-hidden="true" shapeRendering="crispEdges" style={{ verticalAlign: '-1px' }}>
      <rect x="5" y="0" width="2" height="1" fill="currentColor" />
      <rect x="4" y="1" width="4" height="1" fill="currentColor" />
      <rect x="3" y="2" width="6" height="5" fill="currentColor" />
      <rect x="2" y="7" width="8" height="2" fill="currentColor" />
      <rect x="1" y="9" width="10" height="1" fill="currentColor" />
      <rect x="5" y="10" width="2" height="2" fill="currentColor" />
    </svg>
  );
}

function InboxPanel({ items, onClose }: { items: NotificationSummary[]; onClose: () => void }) {
  const qc = useQueryClient();
  const readAll = useMutation({ mutationFn: () => api('/api/notifications/read', { body: {} }), onSuccess: () => void qc.invalidateQueries({ queryKey: INBOX_KEY }) });
  return (
    <div className="inbox-panel" role="dialog" aria-label="Notifications">
      <div className="inbox-head">
        <strong>Notifications</strong>
        <span className="spacer" />
        <button type="button" className="btn btn-small" onClick={() => readAll.mutate()}>
          Mark all read
        </button>
        <button type="button" className="btn btn-small" onClick={onClose} aria-label="Close notifications">
          ✕
        </button>
      </div>
      <EnableBrowserNotifications />
      {items.length === 0 ? (
        <p className="muted small">Nothing yet.</p>
      ) : (
        <ul className="inbox-list">
          {items.map((n) => (
            <li key={n.id} className={n.read ? 'read' : 'unread'} data-kind={n.kind}>
              <Link href={n.link} onClick={onClose}>
                <strong>{n.title}</strong>
              </Link>
              <p className="small">{n.body}</p>
              {n.action_link && (
                <a className="btn btn-small" href={n.action_link}>
                  Allow or deny…
                </a>
              )}
              <span className="muted small">{new Date(n.created_at).toLocaleTimeString()}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * Browser notifications are asked for here, when the person clicks — never on page load
 * (browsers penalise unprompted asks, and people deny them).
 */
export function EnableBrowserNotifications() {
  const qc = useQueryClient();
  const settings = useNotificationSettings();
  const [permission, setPermission] = useState(browserPermission());
  const save = useMutation({
    mutationFn: (next: NotificationSettings) => api<NotificationSettings>('/api/notifications/settings', { method: 'PUT', body: next }),
    onSuccess: (s) => qc.setQueryData(NOTIFY_SETTINGS_KEY, s),
  });
  if (!settings.data || permission === 'unsupported') return null;
  if (settings.data.browser && permission === 'granted') return null;
  if (permission === 'denied') return <p className="muted small">This browser blocks notifications from this site.</p>;
  return (
    <button
      type="button"
      className="btn btn-small"
      onClick={async () => {
        const answer = await Notification.requestPermission();
        setPermission(answer);
        if (answer === 'granted') save.mutate({ ...settings.data!, browser: true });
      }}
    >
      Turn on browser notifications
    </button>
  );
}

'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { NotificationSettings, NotificationSummary } from '../../protocol';
import { getUiSocket } from '../realtime/socket';
import { api } from '../ui/api';

export const INBOX_KEY = ['notifications'] as const;
export const NOTIFY_SETTINGS_KEY = ['notifications', 'settings'] as const;

export type Inbox = { items: NotificationSummary[]; unread: number };

/** Whether this browser can show OS notifications at all (and what the person said). */
export function browserPermission(): NotificationPermission | 'unsupported' {
  return typeof window !== 'undefined' && 'Notification' in window ? Notification.permission : 'unsupported';
}

export function useNotificationSettings() {
  return useQuery({ queryKey: NOTIFY_SETTINGS_KEY, queryFn: () => api<NotificationSettings>('/api/notifications/settings') });
}

/**
 * My inbox, kept live by `notification:new`. A new entry also becomes a browser notification
 * when the person turned those on (and the browser allowed them).
 */
export function useInbox() {
  const qc = useQueryClient();
  const inbox = useQuery({ queryKey: INBOX_KEY, queryFn: () => api<Inbox>('/api/notifications') });
  const settings = useNotificationSettings();
  const browser = settings.data?.browser === true;
  useEffect(() => {
    const socket = getUiSocket();
    const onNew = (n: NotificationSummary) => {
      qc.setQueryData<Inbox>(INBOX_KEY, (old) => (old && !old.items.some((x) => x.id === n.id) ? { items: [n, ...old.items], unread: old.unread + 1 } : old));
      void qc.invalidateQueries({ queryKey: INBOX_KEY });
      if (browser && browserPermission() === 'granted') {
        const shown = new Notification(n.title, { body: n.body, tag: n.id });
        shown.onclick = () => {
          window.focus();
          window.location.href = n.action_link ?? n.link;
        };
      }
    };
    const onConnect = () => void qc.invalidateQueries({ queryKey: INBOX_KEY });
    socket.on('notification:new', onNew);
    socket.on('connect', onConnect);
    return () => {
      socket.off('notification:new', onNew);
      socket.off('connect', onConnect);
    };
  }, [qc, browser]);
  return inbox;
}

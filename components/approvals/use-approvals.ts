'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApprovalSummary } from '../../protocol';
import { patchLive, upsertById } from '../realtime/live-cache';
import { getUiSocket } from '../realtime/socket';
import { api } from '../ui/api';

export const APPROVALS_KEY = ['approvals'] as const;

/** Every approval request of the org (newest first), kept live by `approval:updated`. */
export function useApprovals(enabled = true) {
  const qc = useQueryClient();
  const query = useQuery({ queryKey: APPROVALS_KEY, queryFn: () => api<ApprovalSummary[]>('/api/approvals'), enabled });
  useEffect(() => {
    if (!enabled) return;
    const socket = getUiSocket();
    const onUpdate = (a: ApprovalSummary) => patchLive<ApprovalSummary[]>(qc, APPROVALS_KEY, (list) => upsertById(list, a));
    const onConnect = () => void qc.invalidateQueries({ queryKey: APPROVALS_KEY });
    socket.on('approval:updated', onUpdate);
    socket.on('connect', onConnect);
    return () => {
      socket.off('approval:updated', onUpdate);
      socket.off('connect', onConnect);
    };
  }, [enabled, qc]);
  return query;
}

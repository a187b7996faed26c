'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { LimitsStatus } from '../../protocol';
import { getUiSocket } from '../realtime/socket';
import { api } from '../ui/api';

const KEY = ['limits'] as const;
/** Minutes used move with every tick; a minute's staleness is fine for the spawn box. */
const REFRESH_MS = 60_000;
/** Session updates come in bursts (state, files, activity): one refetch per burst. */
const UPDATE_DEBOUNCE_MS = 400;

/** The plan's limits and whether a spawn would pass, kept current as sessions start and end. */
export function useLimits(enabled: boolean) {
  const qc = useQueryClient();
  const query = useQuery({ queryKey: KEY, queryFn: () => api<LimitsStatus>('/api/limits'), enabled, refetchInterval: REFRESH_MS });
  useEffect(() => {
    if (!enabled) return;
    const socket = getUiSocket();
    // Sessions update often (every file touched); one refetch per burst is enough.
    let timer: ReturnType<typeof setTimeout> | null = null;
    const refresh = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        void qc.invalidateQueries({ queryKey: KEY });
      }, UPDATE_DEBOUNCE_MS);
    };
    socket.on('session:updated', refresh);
    return () => {
      socket.off('session:updated', refresh);
      if (timer) clearTimeout(timer);
    };
  }, [enabled, qc]);
  return query;
}

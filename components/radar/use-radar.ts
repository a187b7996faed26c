'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { RadarSnapshot } from '../../protocol';
import { getUiSocket } from '../realtime/socket';
import { api } from '../ui/api';

export const RADAR_KEY = ['radar'] as const;
/**
 * A burst of FILE_TOUCHED / DIFF_SUMMARY updates (an agent writing many files) refreshes the radar
 * once per this long, not once per event.
 */
export const RADAR_REFRESH_MS = 500;

/** Overlapping live sessions of the org, refreshed as their session updates (file touches, diffs, ends) arrive. */
export function useRadar(enabled: boolean) {
  const qc = useQueryClient();
  const query = useQuery({ queryKey: RADAR_KEY, queryFn: () => api<RadarSnapshot>('/api/radar'), enabled });
  useEffect(() => {
    if (!enabled) return;
    const socket = getUiSocket();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const refresh = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        void qc.invalidateQueries({ queryKey: RADAR_KEY });
      }, RADAR_REFRESH_MS);
    };
    socket.on('session:updated', refresh);
    socket.on('connect', refresh);
    return () => {
      socket.off('session:updated', refresh);
      socket.off('connect', refresh);
      if (timer) clearTimeout(timer);
    };
  }, [enabled, qc]);
  return query;
}

'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { AgentCatalog, RunSummary } from '../../protocol';
import { patchLive, upsertById } from '../realtime/live-cache';
import { getUiSocket } from '../realtime/socket';
import { api } from '../ui/api';

export const AGENTS_KEY = ['agents'] as const;
export const RUNS_KEY = ['runs'] as const;

/** The org's deterministic agents and latest runs, from REST, kept live by the /ui socket. */
export function useWorkshop(enabled: boolean) {
  const qc = useQueryClient();
  const agents = useQuery({ queryKey: AGENTS_KEY, queryFn: () => api<AgentCatalog>('/api/agents'), enabled });
  const runs = useQuery({ queryKey: RUNS_KEY, queryFn: () => api<RunSummary[]>('/api/runs'), enabled });

  useEffect(() => {
    if (!enabled) return;
    const socket = getUiSocket();
    const onAgents = (c: AgentCatalog) => qc.setQueryData(AGENTS_KEY, c);
    const onRun = (r: RunSummary) => patchLive<RunSummary[]>(qc, RUNS_KEY, (list) => upsertById(list, r));
    const onConnect = () => {
      void qc.invalidateQueries({ queryKey: AGENTS_KEY });
      void qc.invalidateQueries({ queryKey: RUNS_KEY });
    };
    socket.on('agents:updated', onAgents);
    socket.on('run:updated', onRun);
    socket.on('connect', onConnect);
    return () => {
      socket.off('agents:updated', onAgents);
      socket.off('run:updated', onRun);
      socket.off('connect', onConnect);
    };
  }, [enabled, qc]);

  return { agents, runs };
}

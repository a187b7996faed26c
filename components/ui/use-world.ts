'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { AgentCatalog, AlertSummary, MeDetails, RepoHealth, RepoSummary, RunnerSummary, RunSummary, SessionSummary, WorldSnapshot } from '../../protocol';
import { patchLive, upsertById } from '../realtime/live-cache';
import { getUiSocket } from '../realtime/socket';
import { api } from './api';

export const WORLD_KEY = ['world'] as const;

const upsert = <T extends { id: string }>(list: T[], item: T) => upsertById(list, item, 'end');

export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: () => api<MeDetails>('/api/me'), retry: false });
}

/** The world snapshot from REST, kept live by the /ui socket's updates. */
export function useWorld(enabled: boolean) {
  const qc = useQueryClient();
  const query = useQuery({ queryKey: WORLD_KEY, queryFn: () => api<WorldSnapshot>('/api/world'), enabled });

  useEffect(() => {
    if (!enabled) return;
    const socket = getUiSocket();
    const patch = (fn: (w: WorldSnapshot) => WorldSnapshot) => patchLive(qc, WORLD_KEY, fn);
    const onSession = (s: SessionSummary) => patch((w) => ({ ...w, sessions: upsert(w.sessions, s) }));
    const onRepo = (r: RepoSummary) => patch((w) => ({ ...w, repos: upsert(w.repos, r) }));
    const onRunner = (r: RunnerSummary) => patch((w) => ({ ...w, runners: upsert(w.runners, r) }));
    // The world keeps open alerts only: a resolved one leaves (its bug disappears).
    const onAlert = (a: AlertSummary) =>
      patch((w) => ({ ...w, alerts: a.state === 'open' ? upsert(w.alerts, a) : w.alerts.filter((x) => x.id !== a.id) }));
    const onHealth = (h: RepoHealth) =>
      patch((w) => ({ ...w, health: [...w.health.filter((x) => x.repo_id !== h.repo_id), h] }));
    const onRun = (r: RunSummary) => patch((w) => ({ ...w, runs: upsert(w.runs, r) }));
    const onAgents = (c: AgentCatalog) => patch((w) => ({ ...w, agents: c.agents }));
    // After a reconnect, anything may have changed while we were away: read the snapshot again.
    const onConnect = () => void qc.invalidateQueries({ queryKey: WORLD_KEY });
    socket.on('session:updated', onSession);
    socket.on('repo:updated', onRepo);
    socket.on('runner:updated', onRunner);
    socket.on('alert:updated', onAlert);
    socket.on('health:updated', onHealth);
    socket.on('run:updated', onRun);
    socket.on('agents:updated', onAgents);
    socket.on('connect', onConnect);
    return () => {
      socket.off('session:updated', onSession);
      socket.off('repo:updated', onRepo);
      socket.off('runner:updated', onRunner);
      socket.off('alert:updated', onAlert);
      socket.off('health:updated', onHealth);
      socket.off('run:updated', onRun);
      socket.off('agents:updated', onAgents);
      socket.off('connect', onConnect);
    };
  }, [enabled, qc]);

  return query;
}

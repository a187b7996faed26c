'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { DtaRunUpdatedSchema, type DtaRunSummary, type DtaRunUpdated } from '../../protocol';
import { patchLive } from '../realtime/live-cache';
import { getUiSocket } from '../realtime/socket';
import { api } from '../ui/api';

export const DTA_RUNS_KEY = ['dta-runs'] as const;

/**
 * A pushed phase change merged into the cached list. The push carries no patch (it can be
 * megabytes): the cached one is kept, and when a patch exists that the cache lacks, the caller
 * reads the list once. Returns whether such a read is needed. Pure (tested without a browser).
 */
export function mergeDtaRun(list: DtaRunSummary[] | undefined, u: DtaRunUpdated): { list: DtaRunSummary[] | undefined; needsPatch: boolean } {
  if (!list) return { list, needsPatch: false };
  const { has_patch, ...rest } = u;
  const i = list.findIndex((r) => r.id === u.id);
  const patch = i === -1 ? null : list[i]!.patch;
  const run: DtaRunSummary = { ...rest, patch: has_patch ? patch : null };
  const next = i === -1 ? [run, ...list] : list.map((r, j) => (j === i ? run : r));
  return { list: next, needsPatch: has_patch && patch === null };
}

function onPush(qc: QueryClient, raw: unknown): void {
  const parsed = DtaRunUpdatedSchema.safeParse(raw);
  if (!parsed.success) {
    console.warn('dta-run:updated: a malformed message was ignored', parsed.error.message);
    return;
  }
  let needsPatch = false;
  patchLive<DtaRunSummary[]>(qc, DTA_RUNS_KEY, (list) => {
    const m = mergeDtaRun(list, parsed.data);
    needsPatch = m.needsPatch;
    return m.list ?? list;
  });
  if (needsPatch) void qc.invalidateQueries({ queryKey: DTA_RUNS_KEY });
}

/** The org's DTA runs, from REST once, then kept live by `dta-run:updated` on the /ui socket (no polling). */
export function useDtaRuns(enabled = true) {
  const qc = useQueryClient();
  const runs = useQuery({ queryKey: DTA_RUNS_KEY, queryFn: () => api<DtaRunSummary[]>('/api/dta-runs'), enabled });
  useEffect(() => {
    if (!enabled) return;
    const socket = getUiSocket();
    const onRun = (r: DtaRunUpdated) => onPush(qc, r);
    // After a reconnect anything may have changed while we were away: read the list again.
    const onConnect = () => void qc.invalidateQueries({ queryKey: DTA_RUNS_KEY });
    socket.on('dta-run:updated', onRun);
    socket.on('connect', onConnect);
    return () => {
      socket.off('dta-run:updated', onRun);
      socket.off('connect', onConnect);
    };
  }, [enabled, qc]);
  return runs;
}

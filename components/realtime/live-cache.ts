'use client';
import type { Query, QueryClient, QueryKey } from '@tanstack/react-query';

/**
 * Live updates patch React Query's cached REST reads. An update that arrives while that read is in
 * flight would be lost: the response was read on the server before the change and overwrites the
 * patch when it lands (or there is nothing yet to patch). Such an update marks the query, and once
 * the read has settled the query is read once more. Marking instead of re-reading at once means a
 * stream of updates during a slow read costs one extra read, not a read per update.
 */
const missed = new WeakMap<Query, true>();
const watched = new WeakSet<QueryClient>();

function watch(qc: QueryClient): void {
  if (watched.has(qc)) return;
  watched.add(qc);
  qc.getQueryCache().subscribe((event) => {
    const query = event.query;
    if (event.type !== 'updated' || query.state.fetchStatus !== 'idle' || !missed.has(query)) return;
    missed.delete(query);
    void qc.invalidateQueries({ queryKey: query.queryKey, exact: true });
  });
}

/** Apply a live update to the cached data of `key` (a no-op while nothing is cached yet). */
export function patchLive<T>(qc: QueryClient, key: QueryKey, fn: (data: T) => T): void {
  watch(qc);
  const query = qc.getQueryCache().find<T>({ queryKey: key, exact: true });
  if (query?.state.fetchStatus === 'fetching') missed.set(query as Query, true);
  qc.setQueryData<T>(key, (data) => (data === undefined ? data : fn(data)));
}

/** The list with `item` in place of the entry of the same id, or added in front. */
export function upsertById<T extends { id: string }>(list: T[], item: T, where: 'front' | 'end' = 'front'): T[] {
  const i = list.findIndex((x) => x.id === item.id);
  if (i === -1) return where === 'front' ? [item, ...list] : [...list, item];
  const copy = list.slice();
  copy[i] = item;
  return copy;
}

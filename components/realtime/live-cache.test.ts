import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { patchLive, upsertById } from './live-cache';

type Item = { id: string; v: number };
const KEY = ['items'] as const;

/** A REST read the test answers by hand: the server's list as it was when the read began. */
function server(initial: Item[]) {
  let rows = initial;
  const pending: Array<() => void> = [];
  let reads = 0;
  return {
    set: (next: Item[]) => (rows = next),
    get reads() {
      return reads;
    },
    read: () => {
      reads += 1;
      const snapshot = rows;
      return new Promise<Item[]>((resolve) => pending.push(() => resolve(snapshot)));
    },
    answer: async () => {
      while (pending.length) pending.shift()!();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

describe('patchLive', () => {
  it('an update that lands while the read is in flight is not lost: the query is read once more', async () => {
    const qc = new QueryClient();
    const srv = server([{ id: 'a', v: 1 }]);
    // A page that shows the list (an active query: invalidating it reads it again).
    const observer = new QueryObserver<Item[]>(qc, { queryKey: KEY, queryFn: srv.read });
    const stop = observer.subscribe(() => undefined);
    // The change happens on the server after the read took its snapshot; its update arrives first.
    srv.set([{ id: 'a', v: 1 }, { id: 'b', v: 1 }]);
    patchLive<Item[]>(qc, KEY, (list) => upsertById(list, { id: 'b', v: 1 }));
    patchLive<Item[]>(qc, KEY, (list) => upsertById(list, { id: 'b', v: 1 }));
    await srv.answer();
    // The stale answer landed, and a second read was started because of the missed update.
    await expect.poll(() => srv.reads).toBe(2);
    await srv.answer();
    await expect.poll(() => qc.getQueryData<Item[]>(KEY)?.map((x) => x.id)).toEqual(['a', 'b']);
    expect(srv.reads).toBe(2);
    stop();
  });

  it('an update to settled data patches it in place, without another read', async () => {
    const qc = new QueryClient();
    const srv = server([{ id: 'a', v: 1 }]);
    const first = qc.fetchQuery({ queryKey: KEY, queryFn: srv.read });
    await srv.answer();
    await first;
    patchLive<Item[]>(qc, KEY, (list) => upsertById(list, { id: 'a', v: 2 }));
    expect(qc.getQueryData<Item[]>(KEY)).toEqual([{ id: 'a', v: 2 }]);
    await new Promise((r) => setTimeout(r, 0));
    expect(srv.reads).toBe(1);
  });
});

describe('upsertById', () => {
  it('replaces the entry of the same id in place, or adds the new one in front or at the end', () => {
    const list = [{ id: 'a', v: 1 }, { id: 'b', v: 1 }];
    expect(upsertById(list, { id: 'b', v: 2 })).toEqual([{ id: 'a', v: 1 }, { id: 'b', v: 2 }]);
    expect(upsertById(list, { id: 'c', v: 1 })[0]).toEqual({ id: 'c', v: 1 });
    expect(upsertById(list, { id: 'c', v: 1 }, 'end')[2]).toEqual({ id: 'c', v: 1 });
    expect(list).toHaveLength(2);
  });
});

/**
 * bench:live's page side of a throughput run (bench/terminal-live.ts): a tap on xterm's writes in
 * the product page and in the one-hop page alike, hashing and counting what xterm is handed between
 * \x02 and \x03, with the page's own time-line (writes, starved time, frames, messages sent).
 */
import type { Page } from '@playwright/test';

/** FNV-1a over the bytes (ASCII: the same as over UTF-16 code units, so both pages hash alike). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Installs the checksum tap in a page: between \x02 and \x03, hash and count what xterm is handed. */
export async function armThroughput(page: Page) {
  await page.evaluate(() => {
    const w = window as unknown as Record<string, unknown> & { __avOnChunk?: (id: string, d: string | Uint8Array) => void; __avTerminals: Record<string, { write(d: string, cb: () => void): void }> };
    const st = { inside: false, done: false, hash: 0x811c9dc5, chars: 0, t0: 0, t1: 0, wall0: 0, wall1: 0 };
    w.__bench = st;
    // The run's end as one promise the bench awaits: polling the page every 50 ms put a CDP
    // round trip on the renderer's main thread (xterm's thread) 20 times a second, on both sides.
    // (No function is named in here: tsx's keepNames would wrap it in a __name the page lacks.)
    const finished: { resolve?: (v: typeof st) => void } = {};
    w.__benchDone = new Promise<typeof st>((r) => (finished.resolve = r));
    w.__avOnChunk = (_id, d) => {
      if (st.done) return;
      const n = d.length;
      let i = 0;
      let h = st.hash;
      let count = 0;
      if (typeof d === 'string') {
        if (!st.inside) {
          i = d.indexOf('\x02') + 1;
          if (i === 0) return;
          st.inside = true;
          st.t0 = performance.now();
          st.wall0 = Date.now();
        }
        for (; i < n; i++) {
          const c = d.charCodeAt(i);
          if (c === 3) {
            st.done = true;
            break;
          }
          h = Math.imul(h ^ c, 0x01000193) >>> 0;
          count++;
        }
      } else {
        if (!st.inside) {
          i = d.indexOf(2) + 1;
          if (i === 0) return;
          st.inside = true;
          st.t0 = performance.now();
          st.wall0 = Date.now();
        }
        for (; i < n; i++) {
          const c = d[i]!;
          if (c === 3) {
            st.done = true;
            break;
          }
          h = Math.imul(h ^ c, 0x01000193) >>> 0;
          count++;
        }
      }
      st.hash = h;
      st.chars += count;
      // Stop the clock when xterm has parsed everything it was given.
      if (st.done)
        Object.values(w.__avTerminals)[0]!.write('', () => {
          st.t1 = performance.now();
          st.wall1 = Date.now();
          finished.resolve?.({ ...st });
        });
    };
    // The page's side of the time-line: writes handed to xterm, and how long xterm had nothing
    // left to parse while the run was on (starved: the bytes were still upstream).
    const term = Object.values(w.__avTerminals)[0]! as { write(d: string | Uint8Array, cb?: () => void): void; onRender(fn: () => void): unknown };
    const write = term.write.bind(term);
    // BENCH_PIPE: the page's end of the pipe's time-line (bench/live-pipe.ts), in Date.now() ms.
    const pipe = (w as { __pipe?: { written: Array<[number, number]>; parsed: Array<[number, number]> } }).__pipe;
    const pg = { writes: 0, bytes: 0, pending: 0, idleSince: performance.now(), starvedMs: 0, maxLatencyMs: 0, sent: 0, renders: 0 };
    // Frames xterm drew while the run was on: each costs the page about the same whatever it shows (bench/page-writes.ts).
    term.onRender(() => {
      if (st.inside && !st.t1) pg.renders++;
    });
    w.__benchPage = pg;
    // Messages the page sends while the run is on (acks, both pages): each costs every hop a read,
    // a parse and, on the product, a forward to the runner.
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (this: WebSocket, data) {
      if (st.inside && !st.t1) pg.sent++;
      return send.call(this, data);
    };
    term.write = (d, cb) => {
      const t = performance.now();
      if (st.inside && !st.t1) {
        pg.writes++;
        pg.bytes += d.length;
        if (pg.pending === 0) pg.starvedMs += t - Math.max(pg.idleSince, st.t0);
      }
      pg.pending++;
      pipe?.written.push([performance.timeOrigin + t, d.length]);
      write(d, () => {
        pg.pending--;
        const now = performance.now();
        pipe?.parsed.push([performance.timeOrigin + now, d.length]);
        pg.maxLatencyMs = Math.max(pg.maxLatencyMs, now - t);
        if (pg.pending === 0) pg.idleSince = now;
        cb?.();
      });
    };
  });
}

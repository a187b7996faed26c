import { parentPort } from 'node:worker_threads';
import { MirrorRequestSchema, refusal, requestNumber, type MirrorReply, type MirrorRequest } from './mirror-messages';
import { PacedTerminal, type Laziness } from './paced-terminal';
import { nameThisThread } from '../../thread-name';

/**
 * The mirror thread (mirror-thread.ts): every session's headless terminal lives here, so parsing
 * output and serialising 10,000 lines (up to ~150 ms in one go, bench:mirror) never hold the
 * control plane's event loop. Messages are handled in arrival order and each terminal applies its
 * writes, resizes and reads in that order, so a read answers the screen after exactly the writes
 * sent before it. Requests come in batches (mirror-outbox.ts) and each is checked on arrival
 * (mirror-messages.ts): a bad one is refused — a read among them answered with the error — and
 * the others go on.
 */

/**
 * In this thread nothing waits on the event loop but the next message, so slices are xterm's own
 * (its writes yield every 12 ms): smaller ones cost a timer turn each for nothing.
 */
export const MIRROR_THREAD_PACING = { sliceChars: 1024 * 1024, stepMs: 12 };

/**
 * Output waits here until a read needs it, so what scrolls out of every read is never parsed
 * (scroll-out.ts). A full queue is parsed but for its newest half at most, which a cut needs to
 * hold scrollback + 2·rows line feeds (10,065 lines): 4 Mi characters (4–8 MB of string per
 * flooding session) keep them for lines of up to ~200 characters. At 2 Mi a coloured build log's
 * ~120-character lines did not fit, so a quarter of it was parsed (bench:mirror's live rows, the
 * thread as screens.ts feeds it at 6 MB/s, 24 MB, 2 runs, load 13–14, 27 Nov 13:00: process CPU
 * build log 39–40 → 25–27 ms/MB, numbered lines 14 → 14–18, noise; in process at 10 MB/s the
 * skipped share of the build log went 76 → 89–91 %). Every character of a
 * queue an attach needs at once is scanned, but only what the screen and scrollback show is parsed;
 * a quiet session is parsed 200 ms after its last output. A read nobody waits for (seek point,
 * periodic snapshot) is answered a second after its output once a buffer's worth of lines follows
 * it — only then is everything before it that scrolls out known — and within 5 s whatever follows:
 * answering every read after a second parsed nearly all of a flood slower than ~1 MB/s of
 * 100-character lines, as a loaded machine delivers it (the mirror thread fed 10 MB at ~2.3 MB/s,
 * load 15–19, 27 Nov 15:20: 22–23 → 13 ms/MB; at ~4 MB/s 11–12 either way).
 */
export const MIRROR_LAZINESS: Laziness = { maxChars: 4 * 1024 * 1024, idleMs: 200, maxAgeMs: 1000, maxHoldMs: 5000 };

const terms = new Map<number, PacedTerminal>();

function handle(m: MirrorRequest): void {
  if (m.kind === 'open') {
    const t = new PacedTerminal({ cols: m.cols, rows: m.rows, scrollback: m.scrollback }, MIRROR_THREAD_PACING, MIRROR_LAZINESS);
    if (m.data) t.write(m.data);
    terms.set(m.id, t);
    return;
  }
  const t = terms.get(m.id);
  if (m.kind === 'read') {
    if (!t) return reply({ req: m.req, error: `no mirror ${m.id} in the mirror thread` });
    const shallow = m.scrollbackIfScrolledOut ?? null;
    void t.after(
      (term, serialize, scrolledOut) => ({ cols: term.cols, rows: term.rows, data: serialize(scrolledOut ? shallow! : m.scrollback), parsed: t.parsedChars, skipped: t.skippedChars, scrolledOut }),
      { depth: m.scrollback, urgent: !m.lazy, depthIfScrolledOut: shallow },
    ).then(
      (s) => reply({ req: m.req, ...s }),
      (err: unknown) => reply({ req: m.req, error: err instanceof Error ? err.message : String(err) }),
    );
    return;
  }
  if (!t) return;
  if (m.kind === 'write') t.write(m.text);
  else if (m.kind === 'resize') t.resize(m.cols, m.rows);
  else {
    t.dispose();
    terms.delete(m.id);
  }
}

const reply = (r: MirrorReply) => parentPort!.postMessage(r);

function receive(batch: unknown): void {
  for (const raw of Array.isArray(batch) ? batch : [batch]) {
    const m = MirrorRequestSchema.safeParse(raw);
    if (m.success) {
      handle(m.data);
      continue;
    }
    const error = refusal('a request to the terminal mirror thread', m.error);
    const req = requestNumber(raw);
    if (req !== null) reply({ req, error });
    else console.error(`[server] ${error}`);
  }
}

parentPort?.on('message', receive);

nameThisThread('av-mirror');

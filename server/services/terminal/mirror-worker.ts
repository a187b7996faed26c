import { parentPort } from 'node:worker_threads';
import { PacedTerminal, type Laziness, type PacedTerminalSize } from './paced-terminal';

/**
 * The mirror thread (mirror-thread.ts): every session's headless terminal lives here, so parsing
 * output and serialising 10,000 lines (up to ~150 ms in one go, bench:mirror) never hold the
 * control plane's event loop. Messages are handled in arrival order and each terminal applies its
 * writes, resizes and reads in that order, so a read answers the screen after exactly the writes
 * sent before it. The messages stay inside this process (no zod: they never cross a trust
 * boundary, and the live path sends one per output chunk).
 */
export type MirrorRequest =
  | ({ kind: 'open'; id: number; data?: string } & PacedTerminalSize)
  | { kind: 'write'; id: number; text: string }
  | { kind: 'resize'; id: number; cols: number; rows: number }
  /** `lazy`: answered when the thread parses that far anyway (seek points, periodic snapshots), not now. */
  | { kind: 'read'; id: number; req: number; scrollback: number; lazy?: boolean }
  | { kind: 'close'; id: number };

/** `skipped`: output characters this terminal never parsed so far (the scroll-out shortcut). */
export type MirrorReply = { req: number; cols: number; rows: number; data: string; skipped: number } | { req: number; error: string };

/**
 * In this thread nothing waits on the event loop but the next message, so slices are xterm's own
 * (its writes yield every 12 ms): smaller ones cost a timer turn each for nothing.
 */
export const MIRROR_THREAD_PACING = { sliceChars: 1024 * 1024, stepMs: 12 };

/**
 * Output waits here until a read needs it, so what scrolls out of every read is never parsed
 * (scroll-out.ts). 2 Mi characters (2–4 MB of string per flooding session) hold ~20,000 build-log
 * lines, twice the 10,000-line scrollback a cut needs after it, and parse in ~0.1–0.2 s when an
 * attach needs them all at once; a quiet session is parsed 200 ms after its last output, and a
 * trickle at least every second, so seek points and snapshots are stored soon after their output.
 */
export const MIRROR_LAZINESS: Laziness = { maxChars: 2 * 1024 * 1024, idleMs: 200, maxAgeMs: 1000 };

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
    void t.after((term, serialize) => ({ cols: term.cols, rows: term.rows, data: serialize(m.scrollback), skipped: t.skippedChars }), { depth: m.scrollback, urgent: !m.lazy }).then(
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

parentPort?.on('message', handle);

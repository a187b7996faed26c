import type { TerminalScreen, TerminalTimeline, TimelineMark, WireEvent } from '../../../protocol';
import { DEFAULT_TERMINAL_SCROLLBACK, TERMINAL_STATES } from '../../../protocol';
import type { Db } from '../../db';
import { toWire } from '../events';
import type { WriterQueue } from '../writer-queue';
import { insertScreenOnce } from '../repo/terminal-screens';
import { TerminalMirror } from './mirror';
import { seqAtTime, storedEvents, storedPage, storedSpan } from './stored-output';

/**
 * A reattach snapshot (the screen and the whole scrollback) is stored after this much output. It
 * is only read by a restarted control plane (the live mirror answers attaches) and by seeks in
 * sessions from before seek snapshots, so it is taken rarely: serialising 10,000 lines costs
 * ~100 ms on a slow core, which every 1 MB was a quarter of the control plane's CPU per MB of
 * output (issue 17); every 4 MB, a restart replays at most 4 MB (~250 ms of parsing). 16 MB was
 * measured and not taken (bench:mirror 27 Nov, load 13–18): it saves 2–12 ms/MB on scrolling
 * output, which the parsed-output rule below already snapshots only every ~10–16 MB, while a
 * restart behind a TUI's 16 MB tail took 1.2–1.5 s against 0.24–0.36 s.
 */
export const DEFAULT_SNAPSHOT_EVERY_CHARS = 4 * 1024 * 1024;
/**
 * The interval counts output the mirror really parsed: a restart replays the stored tail through
 * the same lazy mirror, so what scrolled out costs it nothing but the database read. That read is
 * bounded here: a snapshot is also taken after this many intervals of output, however little of
 * it was parsed (bench:mirror, 32 MB at load 11–13: a 16 MB tail of numbered lines restored in
 * 258 ms, of a TUI — nothing skipped — in 1.4 s; the serialisation saved is ~37 ms per MB of
 * coloured output at 4 MB).
 */
export const MAX_SNAPSHOT_STRETCH = 4;
/**
 * A seek snapshot (screen + SEEK_SCROLLBACK lines) is stored after about this much output the
 * mirror really parses, so a seek parses a small screen and about this much output after it
 * (issue 17: ≤300 ms in 64 MB)...
 */
export const DEFAULT_SEEK_EVERY_CHARS = 256 * 1024;
/**
 * ...or after this many times as much of any output, which bounds what a seek reads from the
 * database and scans. Scrolling output is mostly skipped (a seek of numbered lines parses ~3 % of
 * its tail), so its seek snapshots, each costing 264 lines parsed and 232 serialised, come this
 * much less often. At 4 (1 MB) they were most of the mirror thread's work in a flood (its perf
 * profile, 64 MB of numbered lines, 28 Nov: serialising 25 %, parsing 22 %); at 8 (2 MB) the
 * thread went 4.7 → 3.6 ms/MB (control-plane flood, 4 rounds a side alternating, load 11–14,
 * with the resumed scroll-out search) while a seek anywhere in 64 MB stayed at p50 17 / p99
 * 28–41 ms against 18–39 / 26–166 (bench:screens, 2 runs a side, load 8–10; target ≤ 300 ms).
 */
export const MAX_SEEK_STRETCH = 8;
/**
 * Lines of scrollback a seek snapshot, and so a seek's answer, holds: the replay view needs the
 * screen of then; re-parsing 10,000 lines per seek was most of its cost.
 */
export const SEEK_SCROLLBACK = 200;
/** A timeline lists at most this many moments (a long session touches files all day). */
export const MAX_TIMELINE_MARKS = 5_000;
/** The size a session's PTY starts with when nothing else is known (sessions.ts spawns 120×32). */
const DEFAULT_COLS = 120;
const DEFAULT_ROWS = 32;

/** Event types the scrubber can jump to. */
const MARK_TYPES = ['APPROVAL_REQUESTED', 'TEST_RUN_STARTED', 'TEST_RUN_FINISHED', 'FILE_TOUCHED', 'ALERT_RAISED', 'POLICY_BLOCKED', 'OUTPUT_GAP', 'SESSION_STATE_CHANGED'];

export interface TerminalScreensOptions {
  scrollback?: number;
  snapshotEveryChars?: number;
  /** Snapshots kept per session (the oldest go first); seeking before the oldest kept one replays from it. */
  keepSnapshots?: number;
  seekEveryChars?: number;
  /** Output kept per session, in characters (0: all); see segments.ts. */
  retainChars?: number;
}

interface Entry {
  mirror: TerminalMirror | null;
  /** Events that arrived while the mirror was being restored from the database. */
  pending: WireEvent[];
  ready: Promise<TerminalMirror>;
  /** Seek snapshot writes, one after another. */
  saving: Promise<void> | null;
  /**
   * The full (reattach) snapshot being written; the next waits for it. A chain of its own: behind
   * the frequent seek snapshots in a busy writer queue it would fall far behind the output.
   */
  savingFull: Promise<void> | null;
}

type SnapshotRow = { seq: number; ts: bigint; cols: number; rows: number; data: string };
const screenOf = (r: SnapshotRow): TerminalScreen => ({ seq: r.seq, ts: Number(r.ts), cols: r.cols, rows: r.rows, data: r.data });

function markOf(e: WireEvent): TimelineMark | null {
  const p = e.payload ?? {};
  const base = { seq: e.seq, ts: e.ts };
  switch (e.type) {
    case 'APPROVAL_REQUESTED':
      return { ...base, kind: 'approval', label: String(p.summary ?? p.action ?? 'approval') };
    case 'TEST_RUN_STARTED':
      return { ...base, kind: 'test', label: `tests: ${String(p.command ?? '')}` };
    case 'TEST_RUN_FINISHED': {
      const failed = Number(p.failed ?? 0) > 0 || (p.exit_code !== undefined && p.exit_code !== 0 && p.exit_code !== null);
      return { ...base, kind: failed ? 'error' : 'test', label: `tests ${failed ? 'failed' : 'passed'}: ${String(p.command ?? '')}` };
    }
    case 'FILE_TOUCHED':
      return { ...base, kind: 'file', label: String(p.path ?? p.room_path ?? ''), room: String(p.room_path ?? '') };
    case 'ALERT_RAISED':
    case 'POLICY_BLOCKED':
    case 'OUTPUT_GAP':
      return { ...base, kind: 'error', label: String(p.message ?? p.reason ?? e.type) };
    case 'SESSION_STATE_CHANGED':
      return p.to === 'FAILED' ? { ...base, kind: 'error', label: `failed: ${String(p.reason ?? '')}` } : null;
    default:
      return null;
  }
}

/**
 * One headless mirror per session with output on this node, fed in the live path; its snapshots
 * are persisted every `snapshotEveryChars` so attach, seek and a restarted control plane start
 * from a screen, not from seq 1.
 */
export function createTerminalScreens(db: Db, serialize: WriterQueue, opts: TerminalScreensOptions = {}) {
  const scrollback = opts.scrollback ?? DEFAULT_TERMINAL_SCROLLBACK;
  const every = opts.snapshotEveryChars ?? DEFAULT_SNAPSHOT_EVERY_CHARS;
  const keep = opts.keepSnapshots ?? 0;
  const seekEvery = opts.seekEveryChars ?? DEFAULT_SEEK_EVERY_CHARS;
  const size = { cols: DEFAULT_COLS, rows: DEFAULT_ROWS, scrollback };
  const seekSize = { ...size, scrollback: Math.min(scrollback, SEEK_SCROLLBACK) };
  const entries = new Map<string, Entry>();

  async function latestSnapshot(sessionId: string, where: { seq?: number; ts?: number } = {}): Promise<TerminalScreen | null> {
    const row = await db.terminalSnapshot.findFirst({
      where: {
        sessionId,
        ...(where.seq !== undefined ? { seq: { lte: where.seq } } : {}),
        ...(where.ts !== undefined ? { ts: { lte: BigInt(Math.floor(where.ts)) } } : {}),
      },
      orderBy: { seq: 'desc' },
    });
    return row ? screenOf(row) : null;
  }

  const stored = (sessionId: string, afterSeq: number, through?: number) => storedEvents(db, sessionId, afterSeq, through);

  /** The seek snapshot nearest before `seq`. */
  async function seekPointBefore(sessionId: string, seq: number): Promise<TerminalScreen | null> {
    const row = await db.terminalSeekPoint.findFirst({ where: { sessionId, seq: { lte: seq } }, orderBy: { seq: 'desc' } });
    return row ? screenOf(row) : null;
  }

  async function restore(sessionId: string): Promise<TerminalMirror> {
    const mirror = new TerminalMirror(size, (await latestSnapshot(sessionId)) ?? undefined);
    for await (const page of stored(sessionId, mirror.seq)) mirror.feed(page);
    return mirror;
  }

  function entry(sessionId: string): Entry {
    let e = entries.get(sessionId);
    // A mirror whose thread died lost its screen: the next one is restored from the store.
    if (e?.mirror?.broken) {
      entries.delete(sessionId);
      e = undefined;
    }
    if (e) return e;
    const created: Entry = { mirror: null, pending: [], saving: null, savingFull: null, ready: null as never };
    created.ready = restore(sessionId).then((mirror) => {
      // Seek snapshots are taken inside the mirror, between events, every `seekEvery` characters.
      mirror.seekPoints = { every: seekEvery, most: seekEvery * MAX_SEEK_STRETCH, lines: seekSize.scrollback, taken: (p) => seekPointSoon(sessionId, created, p) };
      mirror.feed(created.pending);
      created.pending = [];
      created.mirror = mirror;
      return mirror;
    });
    created.ready.catch((err) => {
      console.error(`[server] restoring the terminal mirror of ${sessionId} failed`, err);
      if (entries.get(sessionId) === created) entries.delete(sessionId);
    });
    entries.set(sessionId, created);
    e = created;
    return e;
  }

  async function save(sessionId: string, taken: Promise<TerminalScreen>): Promise<void> {
    const s = await taken;
    if (s.seq === 0) return;
    await serialize(async () => {
      // Not stored when the session is gone (deleted with its events): nothing to keep then.
      await insertScreenOnce(db, 'TerminalSnapshot', { sessionId, ...s });
      if (keep > 0) {
        const old = await db.terminalSnapshot.findMany({ where: { sessionId }, orderBy: { seq: 'desc' }, skip: keep, select: { seq: true } });
        if (old.length) await db.terminalSnapshot.deleteMany({ where: { sessionId, seq: { in: old.map((o) => o.seq) } } });
      }
    });
  }

  /**
   * Takes a seek snapshot now (in the parse order of the mirror, so it is the screen through the
   * events fed so far) and stores it after the session's earlier writes.
   */
  function seekPointSoon(sessionId: string, e: Entry, taken: Promise<TerminalScreen>) {
    // Awaited below, in turn; a failure before then is not an unhandled rejection.
    taken.catch(() => undefined);
    const run = (e.saving ?? Promise.resolve())
      .then(async () => {
        const p = await taken;
        if (p.seq === 0) return;
        await serialize(() => insertScreenOnce(db, 'TerminalSeekPoint', { sessionId, ...p }));
      })
      .catch((err) => console.error(`[server] saving a seek snapshot of ${sessionId} failed`, err))
      .finally(() => {
        if (e.saving === run) e.saving = null;
      });
    e.saving = run;
  }

  /**
   * Takes a snapshot now (in the mirror's parse order, so it is the screen through the events fed
   * so far) and stores it after the session's earlier ones; a save that fails is logged (the next
   * interval tries again). A periodic save (`lazy`) is answered when the mirror thread parses that
   * far anyway, so it is not waited for before the next one is asked.
   */
  function saveSoon(sessionId: string, e: Entry, mirror: TerminalMirror, then?: () => void, lazy = false) {
    const taken = mirror.snapshot(lazy);
    taken.catch(() => undefined);
    const run = (e.savingFull ?? Promise.resolve())
      .then(() => save(sessionId, taken))
      .catch((err) => console.error(`[server] saving a terminal snapshot of ${sessionId} failed`, err))
      // Before the mirror is disposed (the session ended), the seek snapshots taken before are written.
      .then(() => (then ? (e.saving ?? undefined) : undefined))
      .finally(() => {
        if (e.savingFull === run) e.savingFull = null;
        then?.();
      });
    e.savingFull = run;
  }

  return {
    /** Lines of scrollback every view of a terminal keeps. */
    scrollback,

    /**
     * The live path: every event of a session, as broadcast (in seq order per call, resends
     * included); `utf8`: some chunks' UTF-8 by seq, exactly their text (TerminalMirror.feed).
     */
    feed(sessionId: string, events: readonly WireEvent[], utf8?: ReadonlyMap<number, Uint8Array>): void {
      const e = entry(sessionId);
      if (!e.mirror) {
        e.pending.push(...events);
        return;
      }
      const mirror = e.mirror;
      mirror.feed(events, utf8);
      const ended = events.some((ev) => ev.type === 'SESSION_STATE_CHANGED' && (TERMINAL_STATES as string[]).includes(String(ev.payload?.to)));
      if (ended) seekPointSoon(sessionId, e, mirror.seekPoint(seekSize.scrollback));
      if (ended) {
        // The last screen is kept for the story page and replay; the mirror's memory is not. It
        // serves attaches until the save is done: by then the batch itself is stored too (the
        // save queues behind the batch in the writer queue).
        saveSoon(sessionId, e, mirror, () => {
          if (entries.get(sessionId) !== e) return;
          entries.delete(sessionId);
          mirror.dispose();
        });
      } else if (mirror.parsedSinceSnapshot >= every || mirror.charsSinceSnapshot >= every * MAX_SNAPSHOT_STRETCH) saveSoon(sessionId, e, mirror, undefined, true);
    },

    resize(sessionId: string, cols: number, rows: number): void {
      const e = entry(sessionId);
      void e.ready.then((m) => m.resize(cols, rows)).catch(() => undefined);
    },

    /** The screen now, for an attaching viewer: live events after its seq follow. */
    async current(sessionId: string): Promise<TerminalScreen> {
      const live = entries.get(sessionId);
      if (live && !live.mirror?.broken) return (await live.ready).snapshot();
      // Not live on this node (ended, or no output since a restart): the stored screen plus its tail.
      const m = await restore(sessionId);
      try {
        return await m.snapshot();
      } finally {
        m.dispose();
      }
    },

    /** The screen as it was at event `seq`, or at moment `ts`: nearest stored snapshot, then the events up to it. */
    async seek(sessionId: string, at: { seq?: number; ts?: number }): Promise<TerminalScreen> {
      let through = at.seq ?? (await seqAtTime(db, sessionId, at.ts!));
      // Output before a retention cut is gone: the earliest moment left is the screen kept at the cut.
      const pruned = (await db.session.findUnique({ where: { id: sessionId }, select: { outputPrunedThrough: true } }))?.outputPrunedThrough ?? 0;
      if (through < pruned) through = pruned;
      // A seek snapshot lies within one seek interval; sessions from before migration 024 have
      // only full snapshots (slower to parse, same screen).
      const from = (await seekPointBefore(sessionId, through)) ?? (await latestSnapshot(sessionId, { seq: through }));
      const m = new TerminalMirror(seekSize, from ?? undefined);
      try {
        for await (const page of stored(sessionId, m.seq, through)) m.feed(page);
        return await m.snapshot();
      } finally {
        m.dispose();
      }
    },

    /** Stored events after `afterSeq` (playback). */
    async history(sessionId: string, afterSeq: number, limit: number): Promise<WireEvent[]> {
      return storedPage(db, sessionId, afterSeq, limit);
    },

    /** The span of a session and the moments worth jumping to. */
    async timeline(sessionId: string): Promise<TerminalTimeline> {
      const [{ first, last }, marks] = await Promise.all([
        storedSpan(db, sessionId),
        db.sessionEvent.findMany({ where: { sessionId, type: { in: MARK_TYPES } }, orderBy: { seq: 'asc' }, take: MAX_TIMELINE_MARKS }),
      ]);
      return { first, last, marks: marks.map(toWire).map(markOf).filter((m): m is TimelineMark => m !== null) };
    },

    /** Waits for pending snapshot writes (tests and shutdown). */
    async flush(): Promise<void> {
      await Promise.all([...entries.values()].flatMap((e) => [e.saving, e.savingFull]));
    },

    /** Store every live mirror's screen now (shutdown, tests). */
    async saveAll(): Promise<void> {
      await Promise.all(
        [...entries.entries()].map(async ([id, e]) => {
          const m = await e.ready.catch(() => null);
          if (m) saveSoon(id, e, m);
          await e.savingFull;
        }),
      );
    },
  };
}

export type TerminalScreens = ReturnType<typeof createTerminalScreens>;

import fs from 'node:fs';
import path from 'node:path';
import {
  RunnerEventSchema,
  TerminalChunkSchema,
  TERMINAL_STATES,
  type RunnerEvent,
  type RunnerEventBody,
  type SessionState,
} from '../../protocol';
import type { Logger } from '../log';
import { AckFile, readAckFile, type SessionBase } from './ack-file';
import { chunkHeadPrefix, decodeLegacyJsonl, decodeRecords, encodeRecord, LEGACY_EXT, newLap, SPOOL_EXT, type Lap, type SpoolRecord } from './spool-file';

/**
 * Durable per-session event spool (ARCHITECTURE.md §4 "nothing lost, nothing doubled").
 *
 * Layout under `<data-dir>/spool/`:
 * - `<sid>.spool` — events written synchronously before they are sent, one record each
 *   (spool-file.ts: a JSON header line, a chunk's text as raw UTF-8 after it, the lap's trailer).
 *   It may still hold acked events; they are skipped on load. Rewound (a new lap from offset 0,
 *   overwriting the old records in place) when the session is fully acked and the lap has grown
 *   past SPOOL_REWIND_BYTES, compacted when it grows large with an acked prefix.
 *   (`<sid>.jsonl` is the older runners' form: read on load, then replaced.)
 * - `<sid>.ack` — small JSON: the acked seq plus what is needed to continue after the spool file was
 *   rewound (last seq/ts/state and the session's base fields), rewritten in place (ack-file.ts).
 *   Written throttled: a stale ack only means a few events are resent, and the server treats
 *   duplicates as no-ops.
 * Both files are deleted once a session has ended and every event of it is acked.
 */

/** Acks arrive many times a second under load; persisting them that often buys nothing. */
export const ACK_PERSIST_DELAY_MS = 500;
/** Rewrite a spool file whose acked prefix is this big, so a session that is never idle stays small. */
export const SPOOL_COMPACT_BYTES = 8 * 1024 * 1024;
/**
 * A fully acked spool file is rewound only once its lap holds this much; below, the ack is
 * persisted throttled like any other. Rewinding costs two synchronous writes (the ack file, the
 * lap line) in the loop that also carries every keystroke's echo, and a flood under flow control
 * empties its backlog on most acks (issue 17). It also bounds the file: about this plus a batch.
 */
export const SPOOL_REWIND_BYTES = 1024 * 1024;

export type { SessionBase };

/** An unacked event; `utf8` (a TERMINAL_CHUNK's text) is what a binary frame sends (frame.ts). */
export type PendingEvent = SpoolRecord;

interface SessionSpool {
  base: SessionBase;
  /** chunkHeadPrefix(base): a chunk's record header is written from it as text. */
  headPrefix: string;
  /** Unacked events, contiguous seqs in ascending order. */
  pending: PendingEvent[];
  ackedSeq: number;
  lastSeq: number;
  lastTs: number | null;
  lastState: SessionState | null;
  ended: boolean;
  fd: number | null;
  /** The end of the current lap's records: where the next record is written. */
  fileBytes: number;
  /** The file's current lap (spool-file.ts): its line at offset 0, its trailer after each record. */
  lap: Lap;
  ackFile: AckFile;
  ackDirty: boolean;
}

export class Spool {
  private readonly sessions = new Map<string, SessionSpool>();
  private readonly listeners = new Set<() => void>();
  private ackTimer: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly now: () => number,
    /** Events to record for a session that died with the last runner, before its gap (e.g. approvals it left pending). */
    private readonly restartEvents: Map<string, RunnerEventBody[]> = new Map(),
    private readonly rewindBytes = SPOOL_REWIND_BYTES,
  ) {}

  /**
   * Loads what a previous runner left behind. A session that had not reached COMPLETED/FAILED
   * lost its process with that runner, so it gets an OUTPUT_GAP and a FAILED state change.
   */
  static async open(
    dir: string,
    opts: { log: Logger; now?: () => number; restartEvents?: Map<string, RunnerEventBody[]>; /** tests: SPOOL_REWIND_BYTES */ rewindBytes?: number },
  ): Promise<Spool> {
    await fs.promises.mkdir(dir, { recursive: true });
    const spool = new Spool(dir, opts.log, opts.now ?? Date.now, opts.restartEvents, opts.rewindBytes ?? SPOOL_REWIND_BYTES);
    spool.load();
    return spool;
  }

  /** Called (synchronously) after every append and ack; the sender coalesces. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  sessionIds(): string[] {
    return [...this.sessions.keys()];
  }

  ackedSeq(sessionId: string): number {
    return this.sessions.get(sessionId)?.ackedSeq ?? 0;
  }

  lastSeq(sessionId: string): number {
    return this.sessions.get(sessionId)?.lastSeq ?? 0;
  }

  /** Unacked events of a session with seq > afterSeq, in order (a view; do not mutate). */
  pendingAfter(sessionId: string, afterSeq: number): PendingEvent[] {
    const s = this.sessions.get(sessionId);
    if (!s || s.pending.length === 0) return [];
    const first = s.pending[0].event.seq;
    const start = Math.max(0, afterSeq - first + 1);
    return start === 0 ? s.pending : s.pending.slice(start);
  }

  pendingCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.pending.length;
    return n;
  }

  /**
   * Assigns seq and ts, validates, and appends the event durably before anyone can send it.
   * An event that fails validation is a runner bug: it is logged and dropped (no seq consumed)
   * rather than spooled, because one invalid event would make the server refuse every batch.
   */
  append(base: SessionBase, body: RunnerEventBody): RunnerEvent | null {
    return this.appendRecord(base, body)?.event ?? null;
  }

  /** append(), returning the spooled record: a TERMINAL_CHUNK's text as UTF-8 beside its event. */
  appendRecord(base: SessionBase, body: RunnerEventBody): PendingEvent | null {
    if (this.closed) {
      this.log.warn(`spool closed; dropping ${body.type} for ${base.session_id}`);
      return null;
    }
    let s = this.sessions.get(base.session_id);
    if (s?.ended) {
      this.log.error(`event ${body.type} after the end of ${base.session_id} dropped`);
      return null;
    }
    const ts = this.now();
    const seq = (s?.lastSeq ?? 0) + 1;
    let event: RunnerEvent;
    /** chunkHeadPrefix of the event's base fields, when they are the session's. */
    let headPrefix: string | undefined;
    if (s && body.type === 'TERMINAL_CHUNK' && isChunkText(body.data) && sameBase(s.base, base)) {
      // The session's output, built here from a string: its base fields passed the full schema
      // with the session's first event, and a chunk has nothing else to check but its text's
      // length. (zod on every chunk was a tenth of the runner's spool time, issue 17.) Written out
      // field by field: a spread is slow in the baseline code the per-chunk path runs in.
      const b = s.base;
      event = { session_id: b.session_id, org_id: b.org_id, repo_id: b.repo_id, repo_ref: b.repo_ref, ts, seq, type: 'TERMINAL_CHUNK', data: body.data };
      headPrefix = s.headPrefix;
    } else {
      const candidate = { ...body, session_id: base.session_id, org_id: base.org_id, repo_id: base.repo_id, repo_ref: base.repo_ref, ts, seq };
      const parsed = RunnerEventSchema.safeParse(candidate);
      if (!parsed.success) {
        this.log.error(`invalid ${body.type} event for ${base.session_id} dropped`, parsed.error);
        return null;
      }
      event = parsed.data;
    }
    if (!s) {
      s = {
        base: { session_id: base.session_id, org_id: base.org_id, repo_id: base.repo_id, repo_ref: base.repo_ref },
        headPrefix: chunkHeadPrefix(base),
        pending: [],
        ackedSeq: 0,
        lastSeq: 0,
        lastTs: null,
        lastState: null,
        ended: false,
        fd: null,
        fileBytes: 0,
        lap: newLap(),
        ackFile: new AckFile(this.ackPath(base.session_id)),
        ackDirty: false,
      };
      this.sessions.set(base.session_id, s);
    }
    const { record, parts } = encodeRecord(event, headPrefix);
    if (s.fd === null) this.openFile(base.session_id, s);
    parts.push(s.lap.trailer);
    record.size += s.lap.trailer.byteLength;
    fs.writevSync(s.fd!, parts, s.fileBytes);
    s.fileBytes += record.size;
    s.pending.push(record);
    s.lastSeq = event.seq;
    s.lastTs = event.ts;
    if (event.type === 'SESSION_STATE_CHANGED') {
      s.lastState = event.to;
      if (TERMINAL_STATES.includes(event.to)) s.ended = true;
    }
    this.emitChange();
    return record;
  }

  /** The server stored everything of this session up to `seq`. Acks only ever move forward. */
  ack(sessionId: string, seq: number): void {
    const s = this.sessions.get(sessionId);
    if (!s || seq <= s.ackedSeq) return;
    s.ackedSeq = Math.min(seq, s.lastSeq);
    let drop = 0;
    while (drop < s.pending.length && s.pending[drop].event.seq <= s.ackedSeq) drop++;
    if (drop > 0) s.pending.splice(0, drop);
    s.ackDirty = true;
    if (s.pending.length === 0 && s.ended) {
      this.forget(sessionId, s);
    } else if (s.pending.length === 0 && s.fileBytes >= this.rewindBytes) {
      this.rewind(sessionId, s);
    } else if (s.fileBytes > SPOOL_COMPACT_BYTES) {
      this.compact(sessionId, s);
    } else {
      this.scheduleAckPersist();
    }
    this.emitChange();
  }

  /** Writes every dirty ack file now (shutdown). */
  flush(): void {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    for (const [sid, s] of this.sessions) {
      if (!s.ackDirty) continue;
      try {
        this.writeAckFile(s);
      } catch (err) {
        this.log.error(`could not persist the ack of ${sid}`, err);
      }
    }
  }

  close(): void {
    this.flush();
    this.closed = true;
    for (const s of this.sessions.values()) {
      if (s.fd !== null) fs.closeSync(s.fd);
      s.fd = null;
      s.ackFile.close();
    }
  }

  // ---- internals ----

  private emitChange(): void {
    for (const l of this.listeners) {
      try {
        l();
      } catch (err) {
        this.log.error('spool listener failed', err);
      }
    }
  }

  private spoolPath(sid: string): string {
    return path.join(this.dir, `${sid}.${SPOOL_EXT}`);
  }

  private legacyPath(sid: string): string {
    return path.join(this.dir, `${sid}.${LEGACY_EXT}`);
  }

  private ackPath(sid: string): string {
    return path.join(this.dir, `${sid}.ack`);
  }

  private scheduleAckPersist(): void {
    if (this.ackTimer || this.closed) return;
    this.ackTimer = setTimeout(() => {
      this.ackTimer = null;
      this.flush();
    }, ACK_PERSIST_DELAY_MS);
    this.ackTimer.unref();
  }

  private writeAckFile(s: SessionSpool): void {
    s.ackFile.write({ acked_seq: s.ackedSeq, last_seq: s.lastSeq, last_ts: s.lastTs, last_state: s.lastState, base: s.base });
    s.ackDirty = false;
  }

  /**
   * A session's file, opened for positioned writes: a new one starts with its lap line; one
   * rewriteFile made is written on from its end.
   */
  private openFile(sid: string, s: SessionSpool): void {
    if (s.fileBytes > 0) {
      s.fd = fs.openSync(this.spoolPath(sid), 'r+');
      return;
    }
    s.fd = fs.openSync(this.spoolPath(sid), 'w');
    fs.writeSync(s.fd, s.lap.line, 0, s.lap.line.byteLength, 0);
    s.fileBytes = s.lap.line.byteLength;
  }

  /**
   * Everything is acked: the next records overwrite this lap's from the start of the file (a new
   * lap line first, so the old trailers end the new lap). The ack file must be durable before,
   * or a restart would lose the seq. Not a truncation: pages the kernel has cached are rewritten
   * at a tenth of the cost of fresh ones (spool-file.ts).
   */
  private rewind(sid: string, s: SessionSpool): void {
    try {
      this.writeAckFile(s);
      const lap = newLap();
      if (s.fd === null) s.fd = fs.openSync(this.spoolPath(sid), 'r+');
      fs.writeSync(s.fd, lap.line, 0, lap.line.byteLength, 0);
      s.lap = lap;
      s.fileBytes = lap.line.byteLength;
    } catch (err) {
      this.log.error(`could not rewind the spool of ${sid}`, err);
    }
  }

  private compact(sid: string, s: SessionSpool): void {
    try {
      this.writeAckFile(s);
      this.rewriteFile(sid, s);
    } catch (err) {
      this.log.error(`could not compact the spool of ${sid}`, err);
    }
  }

  /** The pending events, alone, as the session's `.spool` (an older runner's `.jsonl` goes after). */
  private rewriteFile(sid: string, s: SessionSpool): void {
    if (s.fd !== null) fs.closeSync(s.fd);
    s.fd = null;
    s.lap = newLap();
    const parts: Buffer[] = [s.lap.line];
    s.pending = s.pending.map((p) => {
      const { record, parts: own } = encodeRecord(p.event);
      parts.push(...own, s.lap.trailer);
      record.size += s.lap.trailer.byteLength;
      return record;
    });
    const body = Buffer.concat(parts);
    const tmp = `${this.spoolPath(sid)}.tmp`;
    fs.writeFileSync(tmp, body);
    fs.renameSync(tmp, this.spoolPath(sid));
    // Only now: until the rename, the old file is the only durable copy (both are read on load).
    fs.rmSync(this.legacyPath(sid), { force: true });
    s.fileBytes = body.byteLength;
  }

  private forget(sid: string, s: SessionSpool): void {
    if (s.fd !== null) fs.closeSync(s.fd);
    s.fd = null;
    s.ackFile.close();
    this.sessions.delete(sid);
    for (const p of [this.spoolPath(sid), this.legacyPath(sid), this.ackPath(sid)]) {
      try {
        fs.rmSync(p, { force: true });
      } catch (err) {
        this.log.error(`could not delete ${p}`, err);
      }
    }
  }

  private load(): void {
    const ids = new Set<string>();
    for (const name of fs.readdirSync(this.dir)) {
      const m = /^(sess_[A-Za-z0-9_-]+)\.(spool|jsonl|ack)$/.exec(name);
      if (m) ids.add(m[1]);
      else if (name.endsWith('.tmp')) fs.rmSync(path.join(this.dir, name), { force: true });
    }
    for (const sid of [...ids].sort()) {
      try {
        this.loadSession(sid);
      } catch (err) {
        this.log.error(`could not load the spool of ${sid}; leaving its files alone`, err);
      }
    }
  }

  private loadSession(sid: string): void {
    const ack = readAckFile(this.ackPath(sid), (why) => this.log.warn(`ack file of ${sid} ${why}; resending everything spooled`));
    // An older runner's `.jsonl` first: a crash between writing the `.spool` and deleting it left both.
    const events = [...this.readLegacyJsonl(sid), ...this.readSpoolFile(sid)];
    let base = ack?.base ?? null;
    let lastSeq = Math.max(ack?.last_seq ?? 0, ack?.acked_seq ?? 0);
    let lastTs = ack?.last_ts ?? null;
    let lastState = ack?.last_state ?? null;
    for (const e of events) {
      base = { session_id: e.session_id, org_id: e.org_id, repo_id: e.repo_id, repo_ref: e.repo_ref };
      if (e.seq > lastSeq) lastSeq = e.seq;
      lastTs = e.ts;
      if (e.type === 'SESSION_STATE_CHANGED') lastState = e.to;
    }
    const ackedSeq = Math.min(ack?.acked_seq ?? 0, lastSeq);
    if (!base) {
      this.log.warn(`spool of ${sid} has no readable event; deleting it`);
      this.deleteFiles(sid);
      return;
    }
    const seen = new Set<number>();
    const pending: PendingEvent[] = [];
    for (const e of events) {
      if (e.seq <= ackedSeq || seen.has(e.seq)) continue;
      seen.add(e.seq);
      pending.push({ event: e, size: 0 }); // sized when rewritten below
    }
    pending.sort((a, b) => a.event.seq - b.event.seq);
    const ended = lastState !== null && TERMINAL_STATES.includes(lastState);
    if (ended && pending.length === 0) {
      this.deleteFiles(sid);
      return;
    }
    const ackFile = new AckFile(this.ackPath(sid));
    const s: SessionSpool = { base, headPrefix: chunkHeadPrefix(base), pending, ackedSeq, lastSeq, lastTs, lastState, ended: false, fd: null, fileBytes: 0, lap: newLap(), ackFile, ackDirty: true };
    this.sessions.set(sid, s);
    // Keep only what is still unacked (also drops a torn last record), then continue appending.
    this.writeAckFile(s);
    this.rewriteFile(sid, s);
    if (ended) {
      s.ended = true;
    } else {
      const from = lastState ?? 'CREATED';
      for (const body of this.restartEvents.get(sid) ?? []) this.append(base, body);
      this.append(base, {
        type: 'OUTPUT_GAP',
        reason: `runner restarted: output after seq ${lastSeq} while the runner was down is lost`,
        down_since: lastTs,
      });
      this.append(base, {
        type: 'SESSION_STATE_CHANGED',
        from,
        to: 'FAILED',
        reason: 'runner restarted while the session was running',
        exit_code: null,
      });
      this.log.info(`session ${sid} died with the previous runner; recorded a gap after seq ${lastSeq} and FAILED`);
    }
  }

  private deleteFiles(sid: string): void {
    fs.rmSync(this.spoolPath(sid), { force: true });
    fs.rmSync(this.legacyPath(sid), { force: true });
    fs.rmSync(this.ackPath(sid), { force: true });
  }

  private readSpoolFile(sid: string): RunnerEvent[] {
    let buf: Buffer;
    try {
      buf = fs.readFileSync(this.spoolPath(sid));
    } catch {
      return [];
    }
    const { records, bad, unreadableBytes, lapped } = decodeRecords(buf, sid);
    if (bad > 0) this.log.warn(`skipped ${bad} unreadable record(s) in the spool of ${sid}`);
    // Behind a lap's last record, older laps' records (all acked) are what a lapped file holds.
    if (unreadableBytes > 0 && !lapped) this.log.warn(`the spool of ${sid} ends in ${unreadableBytes} byte(s) of a record cut short; dropped`);
    return records.map((r) => r.event);
  }

  private readLegacyJsonl(sid: string): RunnerEvent[] {
    let text: string;
    try {
      text = fs.readFileSync(this.legacyPath(sid), 'utf8');
    } catch {
      return [];
    }
    const { events, bad } = decodeLegacyJsonl(text, sid);
    if (bad > 0) this.log.warn(`skipped ${bad} unreadable line(s) in the spool of ${sid}`);
    return events;
  }

}

const CHUNK_MAX_CHARS = TerminalChunkSchema.shape.data.maxLength ?? 0;

function isChunkText(data: unknown): data is string {
  return typeof data === 'string' && data.length <= CHUNK_MAX_CHARS;
}

/** The same session fields as the ones that passed the schema (repo_ref: the same object). */
function sameBase(a: SessionBase, b: SessionBase): boolean {
  return a.session_id === b.session_id && a.org_id === b.org_id && a.repo_id === b.repo_id && a.repo_ref === b.repo_ref;
}

import {
  createRedactor,
  createStreamRedactor,
  DEFAULT_RULES,
  RedactionTally,
  redactStrings,
  type ReceiptEntry,
  type Redactor,
  type StreamRedactor,
} from '../../common/redact';
import { TERMINAL_STATES, type RedactionReceiptEntry, type RunnerEvent, type SessionRedactionRow } from '../../protocol';
import type { Db } from '../db';
import { SYSTEM_ACTOR, type AuditService } from './audit';
import type { Principal } from './auth';
import { notFound } from './errors';
import { decodeUtf8 } from './repo/stored-chunk';
import { runnerUtf8 } from './runner-utf8';

/**
 * The control plane's own redaction (ARCHITECTURE.md §7): every runner event is redacted again,
 * with the org's secrets and the same rules, before it is stored or broadcast — a runner is never
 * trusted to have done it. Terminal output goes through one stream redactor per session (in seq
 * order, so a secret cut across two chunks is still seen whole); every other event has its
 * strings redacted whole. What either side masked is kept as the session's receipt.
 */

/** Event fields that are identifiers or enums, never free text: redacting them could only break them. */
const KEPT_FIELDS = new Set([
  'type', 'session_id', 'org_id', 'repo_id', 'approval_id', 'command_hash', 'provider', 'category', 'risk', 'decision',
  'from', 'to', 'outcome', 'source', 'activity', 'severity', 'run_id',
]);
const keep = (key: string) => KEPT_FIELDS.has(key);
/** Sessions whose stream state is kept at once; beyond it the least recently used is dropped (its next chunk starts afresh). */
const MAX_TRACKED_SESSIONS = 10_000;

interface Tracked {
  stream: StreamRedactor;
  whole: Redactor;
  /** What the control plane masked itself. */
  tally: RedactionTally;
  /** What the runner said it masked (its REDACTION_RECEIPT). */
  runner: RedactionReceiptEntry[];
  /** The highest TERMINAL_CHUNK seq fed to the stream: a resend is never fed twice. */
  lastSeq: number;
  /**
   * What the stream let out for the chunks not acknowledged yet, by seq (in seq order): a resend
   * gets exactly that again (it reaches viewers live before storing drops it as a duplicate, so it
   * must never be redacted on its own, where a secret cut across chunks would not be recognised).
   * Kept as the runner's UTF-8 when the stream let its text out unchanged (outside the heap: the
   * text itself is garbage once viewers have it; issue 17), as the text when it masked or held some.
   */
  recent: Map<number, string | Uint8Array>;
  /**
   * The highest seq acknowledged to the runner (stored, and sent live before): a resend at or
   * below it is dropped by storing and by every viewer and mirror (they have its seq), so its
   * text is not kept, and a resend of it goes on empty (never redacted on its own, where a secret
   * cut across chunks would not be recognised).
   */
  acked: number;
}

/**
 * A flood's batch (up to ~900 KB) is redacted in slices of about this many characters, with the
 * event loop let go in between: a keystroke, or another session's echo, then waits for one slice
 * (a few ms) instead of the whole batch. The session's queue keeps its own batches in order.
 */
const REDACT_SLICE_CHARS = 64 * 1024;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Chunks per session whose redacted text is kept for resends at most. A runner resends only what
 * was not acknowledged, so a chunk is let go once its seq is acknowledged (`stored`); this bound
 * only matters when acks stop (a database that keeps failing, a runner sending past its window).
 */
const RECENT_CHUNKS = 512;

const isTerminal = (state: string) => (TERMINAL_STATES as string[]).includes(state);

/**
 * The runner's own string when the stream let out exactly its text (a flood's usual chunk): the
 * stream's output is a slice of the stream's own flattened copy of its window, and that copy
 * would then live as long as the output does (the live fan-out, the mirror's queue, the batch's
 * store round trip, the resend window), copied by every scavenge on the way (issue 17). Comparing
 * costs no allocation; a different text (masked, or held across chunks) goes on as the stream made it.
 */
const unchanged = (released: string, runnerText: string): string => (released === runnerText ? runnerText : released);

export function createRedactionService(db: Db, secretsFor: (orgId: string) => Promise<Record<string, string>>, audit: AuditService) {
  const tracked = new Map<string, Tracked>();
  /**
   * A session's batches are redacted one after another (its stream must see its chunks in order);
   * other sessions' batches do not wait for them: one queue per session, so a keystroke's echo is
   * not redacted after the whole backlog of a flooding session (issue 17: 1.4 s beside two floods).
   */
  const queues = new Map<string, Promise<unknown>>();

  async function track(orgId: string, sessionId: string): Promise<Tracked> {
    const key = `${orgId}:${sessionId}`;
    let t = tracked.get(key);
    if (t) {
      tracked.delete(key); // re-insert: Map order is the LRU order
      tracked.set(key, t);
      return t;
    }
    const secrets = await secretsFor(orgId);
    const tally = new RedactionTally();
    t = { stream: createStreamRedactor(DEFAULT_RULES, secrets, { onMask: tally.note }), whole: createRedactor(secrets), tally, runner: [], lastSeq: 0, recent: new Map(), acked: 0 };
    tracked.set(key, t);
    if (tracked.size > MAX_TRACKED_SESSIONS) tracked.delete(tracked.keys().next().value as string);
    return t;
  }

  async function redactEvents(orgId: string, events: RunnerEvent[]): Promise<{ events: RunnerEvent[]; ended: Array<[string, Tracked]> }> {
    const out: RunnerEvent[] = [];
    const ended: Array<[string, Tracked]> = [];
    const lastChunk = new Map<string, number>();
    let sliceChars = 0;
    for (const e of events) {
      const t = await track(orgId, e.session_id);
      if (e.type === 'TERMINAL_CHUNK') {
        sliceChars += e.data.length;
        if (sliceChars > REDACT_SLICE_CHARS) {
          sliceChars = e.data.length;
          await yieldToLoop();
        }
        if (e.seq <= t.lastSeq) {
          // A resend: what the stream let out for it; nothing when it is acknowledged; redacted on
          // its own when older than what is kept and not acknowledged (acks stopped for long).
          const kept = t.recent.get(e.seq);
          const data = kept === undefined ? (e.seq <= t.acked ? '' : t.whole.redact(e.data)) : typeof kept === 'string' ? kept : decodeUtf8(kept);
          out.push({ ...e, data });
          continue;
        }
        t.lastSeq = e.seq;
        const data = unchanged(t.stream.push(e.data), e.data);
        t.recent.set(e.seq, (data === e.data && runnerUtf8(e)) || data);
        if (t.recent.size > RECENT_CHUNKS) t.recent.delete(t.recent.keys().next().value!);
        t.tally.settle(e.seq);
        lastChunk.set(e.session_id, out.length);
        out.push(data === e.data ? e : { ...e, data });
        continue;
      }
      out.push(redactStrings(e, t.whole, keep, t.tally.note));
      t.tally.settle(e.seq);
      if (e.type === 'REDACTION_RECEIPT') t.runner = e.entries;
      if (e.type === 'SESSION_STATE_CHANGED' && isTerminal(e.to)) {
        // The stream ended: what the control plane still holds goes out with the last chunk of
        // this batch (end() masks a candidate still undecided). Without one, it is dropped: it can
        // only be a masked candidate or text the runner already cut, and the receipt says so.
        const rest = t.stream.end();
        t.tally.settle(e.seq);
        const k = lastChunk.get(e.session_id);
        if (rest && k !== undefined) {
          const chunk = out[k] as Extract<RunnerEvent, { type: 'TERMINAL_CHUNK' }>;
          out[k] = { ...chunk, data: chunk.data + rest };
        } else if (rest) t.tally.add('held-at-end', null, 1, e.seq, e.seq);
        ended.push([e.session_id, t]);
        tracked.delete(`${orgId}:${e.session_id}`);
      }
    }
    return { events: out, ended };
  }

  async function saveReceipt(orgId: string, sessionId: string, t: Tracked): Promise<void> {
    const rows = [
      ...t.runner.map((r) => ({ source: 'runner', ...r })),
      ...t.tally.list().map((r: ReceiptEntry) => ({ source: 'control-plane', ...r })),
    ];
    for (const r of rows) {
      const data = { count: r.count, firstSeq: r.first_seq, lastSeq: r.last_seq };
      await db.sessionRedaction.upsert({
        where: { sessionId_source_rule_secretName: { sessionId, source: r.source, rule: r.rule, secretName: r.secret_name ?? '' } },
        create: { sessionId, source: r.source, rule: r.rule, secretName: r.secret_name ?? '', ...data },
        update: data,
      });
    }
    if (rows.length) {
      const summary = (list: typeof rows) => list.map((r) => ({ rule: r.rule, secret: r.secret_name, count: r.count, first_seq: r.first_seq, last_seq: r.last_seq }));
      await audit.record({
        orgId,
        actor: SYSTEM_ACTOR,
        action: 'session.redaction',
        target: sessionId,
        detail: { runner: summary(rows.filter((r) => r.source === 'runner')), control_plane: summary(rows.filter((r) => r.source === 'control-plane')) },
      });
    }
  }

  return {
    /**
     * Redacts a runner's batch (called at ingest, before anything is stored or broadcast). Events
     * come back in the same order with the same seqs; a TERMINAL_CHUNK's data may be shorter
     * (text still undecided moves to the session's next chunk) or empty.
     */
    redactBatch(runner: { orgId: string }, events: RunnerEvent[]): Promise<RunnerEvent[]> {
      const keys = [...new Set(events.map((e) => `${runner.orgId}:${e.session_id}`))];
      const before = keys.map((k) => queues.get(k)).filter((q) => q !== undefined);
      // A batch queued behind another starts on a later turn of the event loop: chained through
      // microtasks, a session's queued batches (each under a slice) ran as one long task that a
      // keystroke's echo in another session waited behind (issue 17, 74-107 ms under floods).
      const run = before.length ? Promise.all(before).then(yieldToLoop).then(() => redactEvents(runner.orgId, events)) : redactEvents(runner.orgId, events);
      // Settles with nothing: the queue must not keep the batch's redacted text until the next batch.
      const settled = run.then(
        () => undefined,
        () => undefined,
      );
      for (const k of keys) queues.set(k, settled);
      void settled.then(() => {
        for (const k of keys) if (queues.get(k) === settled) queues.delete(k);
      });
      return run.then(({ events: out, ended }) => {
        // Written beside ingest, after it: the session row exists, and a receipt must never fail a batch.
        for (const [sessionId, t] of ended) {
          void saveReceipt(runner.orgId, sessionId, t).catch((err) => console.error(`[server] saving the redaction receipt of ${sessionId} failed`, err));
        }
        return out;
      });
    },

    /** These seqs are stored and acknowledged to the runner: their chunks are not kept for a resend any more. */
    stored(orgId: string, acked: ReadonlyArray<{ session_id: string; seq: number }>): void {
      for (const { session_id, seq } of acked) {
        const t = tracked.get(`${orgId}:${session_id}`);
        if (!t || seq <= t.acked) continue;
        t.acked = seq;
        for (const kept of t.recent.keys()) {
          if (kept > seq) break;
          t.recent.delete(kept);
        }
      }
    },

    /** The session's receipt: what the runner and the control plane masked, by rule and secret name. */
    async receipt(p: Principal, sessionId: string): Promise<SessionRedactionRow[]> {
      const session = await db.session.findFirst({ where: { id: sessionId, orgId: p.orgId }, select: { id: true } });
      if (!session) throw notFound('That session');
      const rows = await db.sessionRedaction.findMany({ where: { sessionId }, orderBy: [{ firstSeq: 'asc' }, { rule: 'asc' }] });
      const out: SessionRedactionRow[] = rows.map((r) => ({
        source: r.source as SessionRedactionRow['source'],
        rule: r.rule,
        secret_name: r.secretName || null,
        count: r.count,
        first_seq: r.firstSeq,
        last_seq: r.lastSeq,
      }));
      // A running session's receipt so far lives in memory until it ends.
      const live = tracked.get(`${p.orgId}:${sessionId}`);
      if (live && rows.length === 0) {
        out.push(...live.runner.map((r) => ({ source: 'runner' as const, ...r })), ...live.tally.list().map((r) => ({ source: 'control-plane' as const, ...r })));
      }
      return out;
    },
  };
}

export type RedactionService = ReturnType<typeof createRedactionService>;

type Acked = { acked: Array<{ session_id: string; seq: number }> };

/**
 * Wraps the event service so every batch is redacted by the control plane before ingest sees it,
 * and what the ingest acknowledged is no longer kept for resends.
 */
export function redactingIngest<E extends { ingest(runner: { id: string; orgId: string; name: string }, events: RunnerEvent[]): Promise<Acked> }>(
  events: E,
  redaction: RedactionService,
): E {
  // Not an async function: one would keep the runner's unredacted batch reachable until the ingest
  // is done (handler.ts says why that matters); here it is garbage once redacted.
  const ingest = (runner: { id: string; orgId: string; name: string }, batch: RunnerEvent[]) =>
    redaction
      .redactBatch(runner, batch)
      .then((redacted) => events.ingest(runner, redacted))
      .then((result) => {
        redaction.stored(runner.orgId, result.acked);
        return result;
      });
  return { ...events, ingest: ingest as E['ingest'] };
}

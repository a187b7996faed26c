import { randomBytes } from 'node:crypto';
import xtermHeadless from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunnerEvent, RunnerEventBody, WireEvent } from '../../protocol';
import { connectDb } from '../db';
import { runnerToWire } from '../services/events';
import { SEEK_SCROLLBACK, type TerminalScreensOptions } from '../services/terminal/screens';
import { SEGMENT_CHARS } from '../services/terminal/segments';
import { insertSegments, RUN_ROWS_MAX } from '../services/repo/terminal-segments';
import { storedEvents } from '../services/terminal/stored-output';
import { insertScreenOnce } from '../services/repo/terminal-screens';
import { createServices } from '../services';
import { openServiceDb, type ServiceDb } from './service-db';

const { Terminal } = xtermHeadless;
const { SerializeAddon } = serializeAddon;
const SID = 'sess_segments01';
const PTY = { cols: 120, rows: 32 };

/** Events as the runner's spool writes them: seq from `from`, one session. */
function events(from: number, bodies: RunnerEventBody[]): RunnerEvent[] {
  return bodies.map((b, i) => ({
    ...b,
    session_id: SID,
    org_id: 'org_svc',
    repo_id: 'repo_test01',
    repo_ref: { provider: 'local', owner: '', name: 'demo' },
    ts: 1_700_000_000_000 + (from + i) * 10,
    seq: from + i,
  })) as RunnerEvent[];
}

/**
 * Batches like a flooding shell's: chunks of uneven length (so segment boundaries fall anywhere,
 * never on a line), a file touch now and then (events that stay rows between folded chunks).
 */
function flood(from: number, batches: number, perBatch = 40): RunnerEvent[][] {
  const out: RunnerEvent[][] = [];
  let seq = from;
  let line = from * 1000;
  for (let b = 0; b < batches; b++) {
    const bodies: RunnerEventBody[] = [];
    for (let i = 0; i < perBatch; i++) {
      if (i === perBatch - 1 && b % 3 === 0) {
        bodies.push({ type: 'FILE_TOUCHED', path: `src/f${b}.ts`, room_path: 'src', reason: 'write' } as RunnerEventBody);
        continue;
      }
      let data = '';
      const n = 1 + ((seq * 7 + i) % 9);
      for (let k = 0; k < n; k++) data += `\x1b[3${line % 8}mline ${line++}\x1b[0m ${'x'.repeat(line % 37)}\r\n`;
      bodies.push({ type: 'TERMINAL_CHUNK', data: data.slice(0, data.length - (seq % 5)) } as RunnerEventBody);
    }
    out.push(events(seq, bodies));
    seq += bodies.length;
  }
  return out;
}

async function readAll(db: ServiceDb['db'], after = 0): Promise<WireEvent[]> {
  const all: WireEvent[] = [];
  for await (const page of storedEvents(db, SID, after)) all.push(...page);
  return all;
}

/** What was sent, as viewers see it, in seq order. */
const sentWire = (batches: RunnerEvent[][]) => batches.flat().map((e) => runnerToWire(e)).sort((a, b) => a.seq - b.seq);

describe('terminal output stored in ~64 KB segments', () => {
  let s: ServiceDb;
  afterEach(() => s?.close());

  async function openWith(terminal?: TerminalScreensOptions) {
    s = await openServiceDb({ defaultPlan: 'enterprise', terminal });
    await s.db.session.create({
      data: { id: SID, orgId: s.orgId, repoId: 'repo_test01', runnerId: s.runner.id, createdById: 'user_admin1', provider: 'shell', roomPath: '', title: 't', state: 'RUNNING', reason: 'test' },
    });
  }

  /** Another control plane on the same database (a restart: nothing of the first one's memory). */
  function restarted(db: ServiceDb['db']) {
    const services = createServices(db, s.orgId, { secretKey: randomBytes(32), defaultPlan: 'enterprise' });
    services.ports.gateway = s.services.ports.gateway;
    services.ports.broadcast = s.services.ports.broadcast;
    return services;
  }

  /**
   * Every segment is closed (holds at least half a segment's worth) but those of the open run (the
   * newest rows, together short of a segment and fewer than the row cap), and none overlap.
   */
  async function expectSegmentsWellCut() {
    const segs = await s.db.terminalSegment.findMany({ where: { sessionId: SID }, orderBy: { seqFrom: 'asc' } });
    const full = segs.findLastIndex((seg) => seg.chars >= SEGMENT_CHARS / 2);
    for (const seg of segs.slice(0, full + 1)) expect(seg.chars).toBeGreaterThanOrEqual(SEGMENT_CHARS / 2);
    const run = segs.slice(full + 1);
    expect(run.length).toBeLessThanOrEqual(RUN_ROWS_MAX);
    expect(run.reduce((n, x) => n + x.chars, 0)).toBeLessThan(SEGMENT_CHARS);
    for (let i = 1; i < segs.length; i++) expect(segs[i]!.seqFrom).toBeGreaterThan(segs[i - 1]!.seqTo);
    for (const seg of segs) expect(seg.data.length).toBe(seg.chars);
    return segs;
  }

  /** Every batch's output is in segments, once and in order, and none is left as a chunk row. */
  async function expectStoredOnce(db: ServiceDb['db'], batches: RunnerEvent[][]) {
    expect(await db.sessionEvent.count({ where: { sessionId: SID, type: 'TERMINAL_CHUNK' } })).toBe(0);
    const segs = await expectSegmentsWellCut();
    expect(await readAll(db)).toEqual(sentWire(batches));
    return segs;
  }

  it('writes output straight into segments: every seq once and in order across boundaries, holes and resends', async () => {
    await openWith();
    const batches = flood(1, 120);
    // A hole: batch 11 arrives before batch 10; its output waits as rows until the hole is filled.
    for (const [i, b] of batches.entries()) {
      if (i === 10) continue;
      const { acked } = await s.services.events.ingest(s.runner, b);
      // Never acknowledged past the hole, so the runner keeps what is missing.
      if (i === 11) expect(acked).toEqual([{ session_id: SID, seq: batches[9]!.at(-1)!.seq }]);
      if (i === 11) await s.services.events.ingest(s.runner, batches[10]!);
    }
    const last = batches.at(-1)!.at(-1)!.seq;
    expect((await s.db.session.findUniqueOrThrow({ where: { id: SID } })).lastSeq).toBe(last);
    const segs = await expectSegmentsWellCut();
    const sentChars = batches.flat().reduce((n, e) => n + (e.type === 'TERMINAL_CHUNK' ? e.data.length : 0), 0);
    expect(sentChars).toBeGreaterThan(8 * SEGMENT_CHARS);
    // Folded as it went (expectSegmentsWellCut): all but less than a segment's worth is in full segments.
    expect(segs.filter((x) => x.chars >= SEGMENT_CHARS).length).toBeGreaterThanOrEqual(8);
    // Nothing is stored one row per chunk: output is written once, into segments.
    expect(await s.db.sessionEvent.count({ where: { sessionId: SID, type: 'TERMINAL_CHUNK' } })).toBe(0);
    expect(await s.db.sessionEvent.count({ where: { sessionId: SID } })).toBe(batches.flat().filter((e) => e.type !== 'TERMINAL_CHUNK').length);
    expect(await readAll(s.db)).toEqual(sentWire(batches));

    // A resend of stored output (the runner never saw the ack) changes nothing, and is acked.
    const { acked } = await s.services.events.ingest(s.runner, batches[3]!);
    expect(acked).toEqual([{ session_id: SID, seq: last }]);
    expect(await readAll(s.db)).toEqual(sentWire(batches));
    expect(await s.db.terminalSegment.count({ where: { sessionId: SID } })).toBe(segs.length);
    // Reading from the middle of a segment starts exactly after the given seq.
    const mid = Math.floor((segs[2]!.seqFrom + segs[2]!.seqTo) / 2);
    expect(await readAll(s.db, mid)).toEqual(sentWire(batches).filter((e) => e.seq > mid));
  }, 120_000);

  it('a quiet session (a chunk per batch) adds rows to its open run, folded by the row cap; a restart carries the run on', async () => {
    await openWith();
    const echo = (from: number, n: number) => Array.from({ length: n }, (_, i) => events(from + i, [{ type: 'TERMINAL_CHUNK', data: `key ${from + i}\r\n$ ` } as RunnerEventBody]));
    const first = echo(1, RUN_ROWS_MAX + 10);
    for (const b of first) await s.services.events.ingest(s.runner, b);
    // The row cap folded the first RUN_ROWS_MAX batches into one (short) segment, which the run goes on from.
    const before = await expectSegmentsWellCut();
    expect(before.length).toBe(10);
    expect(before[0]!.seqTo).toBe(RUN_ROWS_MAX + 1);
    const db2 = await connectDb(s.url);
    try {
      // Another process reads the run where this one left it, and folds it at the cap too.
      const after = restarted(db2);
      const second = echo(RUN_ROWS_MAX + 11, RUN_ROWS_MAX);
      for (const b of second) await after.events.ingest(s.runner, b);
      const segs = await expectSegmentsWellCut();
      expect(segs.length).toBe(10);
      expect(segs[0]!.seqTo).toBe(2 * RUN_ROWS_MAX + 1);
      await expectStoredOnce(db2, [...first, ...second]);
    } finally {
      await db2.$disconnect();
    }
  }, 120_000);

  it('a hole left open across a restart: the resend over it is stored once and acked through', async () => {
    await openWith();
    const batches = flood(1, 30);
    for (const [i, b] of batches.entries()) if (i !== 5) await s.services.events.ingest(s.runner, b);
    const db2 = await connectDb(s.url);
    try {
      const after = restarted(db2);
      // The runner resends everything unacked, in order, after reconnecting to the new process:
      // the first batch fills the hole and covers output already kept above it, as rows.
      const resend = [[...batches[5]!, ...batches[6]!], ...batches.slice(7)];
      let acked: Array<{ session_id: string; seq: number }> = [];
      for (const b of resend) ({ acked } = await after.events.ingest(s.runner, b));
      expect(acked).toEqual([{ session_id: SID, seq: batches.at(-1)!.at(-1)!.seq }]);
      await expectStoredOnce(db2, batches);
    } finally {
      await db2.$disconnect();
    }
  }, 120_000);

  it('a runner back from another node that stored above a hole: the resend over its rows is stored once', async () => {
    await openWith();
    const batches = flood(1, 12);
    for (const b of batches.slice(0, 5)) await s.services.events.ingest(s.runner, b);
    // The runner leaves this node (its disconnect handler) and reaches another one, which stores
    // batch 6 above the hole of a lost batch 5 as rows, and acks only through 4.
    s.services.events.forgetRunner(s.runner.id);
    const db2 = await connectDb(s.url);
    try {
      const other = restarted(db2);
      expect((await other.events.ingest(s.runner, batches[6]!)).acked).toEqual([{ session_id: SID, seq: batches[4]!.at(-1)!.seq }]);
    } finally {
      await db2.$disconnect();
    }
    // Back here, it resends everything unacked, in order.
    let acked: Array<{ session_id: string; seq: number }> = [];
    for (const b of [[...batches[5]!, ...batches[6]!], ...batches.slice(7)]) ({ acked } = await s.services.events.ingest(s.runner, b));
    expect(acked).toEqual([{ session_id: SID, seq: batches.at(-1)!.at(-1)!.seq }]);
    await expectStoredOnce(s.db, batches);
  }, 120_000);

  it('output stored one row per chunk by an older version still replays, and is taken into segments as the session goes on', async () => {
    await openWith();
    const batches = flood(1, 40);
    const old = batches.slice(0, 20);
    // As the control plane before direct segments stored it: an event row per chunk, the prefix on the session.
    await s.db.sessionEvent.createMany({
      data: old.flat().map((e) => ({ sessionId: SID, seq: e.seq, type: e.type, ts: BigInt(e.ts), payload: JSON.stringify(e) })),
    });
    await s.db.session.update({ where: { id: SID }, data: { lastSeq: old.at(-1)!.at(-1)!.seq } });
    expect(await readAll(s.db)).toEqual(sentWire(old));
    for (const b of batches.slice(20)) await s.services.events.ingest(s.runner, b);
    await expectStoredOnce(s.db, batches);
  }, 120_000);

  it('an open segment appended to by an older version (short of a segment) is taken into the run and folded', async () => {
    await openWith();
    const batches = flood(1, 60);
    const old = batches.slice(0, 3);
    // As the version that appended to the newest segment left it: one short segment, the prefix on the session.
    const chunks = old.flat().filter((e) => e.type === 'TERMINAL_CHUNK');
    await s.db.sessionEvent.createMany({
      data: old.flat().filter((e) => e.type !== 'TERMINAL_CHUNK').map((e) => ({ sessionId: SID, seq: e.seq, type: e.type, ts: BigInt(e.ts), payload: JSON.stringify(e) })),
    });
    await insertSegments(s.db, [{ sessionId: SID, chunks: chunks.map((e) => ({ seq: e.seq, ts: e.ts, chars: (e as { data: string }).data.length, data: (e as { data: string }).data })) }]);
    await s.db.session.update({ where: { id: SID }, data: { lastSeq: old.at(-1)!.at(-1)!.seq } });
    expect((await s.db.terminalSegment.findFirstOrThrow({ where: { sessionId: SID } })).chars).toBeLessThan(SEGMENT_CHARS);
    for (const b of batches.slice(3)) await s.services.events.ingest(s.runner, b);
    const segs = await expectStoredOnce(s.db, batches);
    expect(segs[0]!.seqFrom).toBe(1);
    expect(segs[0]!.chars).toBeGreaterThanOrEqual(SEGMENT_CHARS);
  }, 120_000);

  it('a serialised screen is stored once, and not at all for a session that is gone', async () => {
    await openWith();
    const screen = { sessionId: SID, seq: 7, ts: 1_700_000_000_123, cols: 120, rows: 32, data: '\x1b[31mred\x1b[0m é 🙂' };
    for (const table of ['TerminalSnapshot', 'TerminalSeekPoint'] as const) {
      await insertScreenOnce(s.db, table, screen);
      await insertScreenOnce(s.db, table, { ...screen, data: 'a second save of the same seq' });
      await insertScreenOnce(s.db, table, { ...screen, sessionId: 'sess_gone0001' });
    }
    for (const rows of [await s.db.terminalSnapshot.findMany(), await s.db.terminalSeekPoint.findMany()]) {
      expect(rows.map((r) => ({ ...r, ts: Number(r.ts) }))).toEqual([screen]);
    }
  });

  it('retention prunes old segments but keeps the seek snapshot at the cut: seeking there and later stays exact', async () => {
    const retain = 4 * SEGMENT_CHARS;
    await openWith({ snapshotEveryChars: 2 * SEGMENT_CHARS, seekEveryChars: SEGMENT_CHARS, retainChars: retain });
    const batches = flood(1, 160);
    const live = new Terminal({ ...PTY, scrollback: SEEK_SCROLLBACK, allowProposedApi: true });
    const serializer = new SerializeAddon();
    live.loadAddon(serializer as never);
    const screens = new Map<number, string>();
    for (const b of batches) {
      await s.services.events.ingest(s.runner, b);
      // The live path feeds the mirror what viewers get (ui-namespace does this on broadcast).
      const wire = b.map((e) => runnerToWire(e));
      s.services.terminalScreens.feed(SID, wire);
      for (const e of wire) if (e.data) live.write(e.data);
      await new Promise<void>((r) => live.write('', r));
      screens.set(b.at(-1)!.seq, serializer.serialize({ scrollback: SEEK_SCROLLBACK }));
    }
    await s.services.terminalScreens.flush();
    await s.services.terminalSegments.pruneNow(SID);

    const { outputPrunedThrough: cut } = await s.db.session.findUniqueOrThrow({ where: { id: SID } });
    expect(cut).toBeGreaterThan(0);
    const segs = await s.db.terminalSegment.findMany({ where: { sessionId: SID }, select: { seqFrom: true, seqTo: true, chars: true } });
    const keptChars = segs.reduce((n, x) => n + x.chars, 0);
    expect(keptChars).toBeLessThan(retain + 4 * SEGMENT_CHARS); // bounded: the retained output and the stretch back to a seek snapshot
    expect(Math.min(...segs.map((x) => x.seqFrom))).toBeLessThanOrEqual(cut + 1);
    expect(await s.db.terminalSeekPoint.count({ where: { sessionId: SID, seq: cut } })).toBe(1);
    expect(await s.db.terminalSeekPoint.count({ where: { sessionId: SID, seq: { lt: cut } } })).toBe(0);
    // Sprite replay keeps every other event.
    expect(await s.db.sessionEvent.count({ where: { sessionId: SID, type: 'FILE_TOUCHED' } })).toBe(batches.flat().filter((e) => e.type === 'FILE_TOUCHED').length);

    // Seeking after the cut shows exactly the screen of then; before it, the earliest screen left.
    const after = [...screens.keys()].filter((seq) => seq > cut);
    for (const seq of [after[0]!, after[Math.floor(after.length / 2)]!, after.at(-1)!]) {
      const screen = await s.services.terminalScreens.seek(SID, { seq });
      expect(screen.seq).toBe(seq);
      expect(screen.data).toBe(screens.get(seq));
    }
    const early = await s.services.terminalScreens.seek(SID, { seq: 1 });
    expect(early.seq).toBe(cut);
    live.dispose();
  }, 120_000);
});

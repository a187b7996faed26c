import xtermHeadless from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunnerEvent, RunnerEventBody, WireEvent } from '../../protocol';
import { connectDb } from '../db';
import { runnerToWire } from '../services/events';
import { SEEK_SCROLLBACK, type TerminalScreensOptions } from '../services/terminal/screens';
import { createSegmentStore, SEGMENT_CHARS } from '../services/terminal/segments';
import { storedEvents } from '../services/terminal/stored-output';
import { createWriterQueue } from '../services/writer-queue';
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

  it('folds output into segments: every seq once and in order across boundaries, holes, resends and a restart', async () => {
    await openWith();
    const batches = flood(1, 120);
    // A hole: batch 11 arrives before batch 10; folding stops at the stored prefix until it is filled.
    for (const [i, b] of batches.entries()) {
      if (i === 10) continue;
      await s.services.events.ingest(s.runner, b);
      if (i === 11) await s.services.events.ingest(s.runner, batches[10]!);
    }
    await s.services.terminalSegments.flush();
    const segs = await s.db.terminalSegment.findMany({ where: { sessionId: SID }, orderBy: { seqFrom: 'asc' } });
    const sentChars = batches.flat().reduce((n, e) => n + (e.type === 'TERMINAL_CHUNK' ? e.data.length : 0), 0);
    expect(sentChars).toBeGreaterThan(8 * SEGMENT_CHARS);
    expect(segs.length).toBeGreaterThanOrEqual(Math.floor(sentChars / SEGMENT_CHARS) - 1);
    for (const seg of segs) expect(seg.chars).toBeGreaterThanOrEqual(SEGMENT_CHARS);
    for (let i = 1; i < segs.length; i++) expect(segs[i]!.seqFrom).toBeGreaterThan(segs[i - 1]!.seqTo);
    const rowsLeft = await s.db.sessionEvent.count({ where: { sessionId: SID, type: 'TERMINAL_CHUNK' } });
    expect(rowsLeft).toBeLessThan(batches.flat().length / 4); // only the unfolded tail stays one row per chunk
    expect(await readAll(s.db)).toEqual(sentWire(batches));

    // A resend of folded output (the runner never saw the ack) is stored again as rows: still once.
    await s.services.events.ingest(s.runner, batches[3]!);
    expect(await readAll(s.db)).toEqual(sentWire(batches));
    // Reading from the middle of a segment starts exactly after the given seq.
    const mid = Math.floor((segs[2]!.seqFrom + segs[2]!.seqTo) / 2);
    expect(await readAll(s.db, mid)).toEqual(sentWire(batches).filter((e) => e.seq > mid));

    // A restarted control plane (another connection, a fresh store) reads the same and folds on.
    const db2 = await connectDb(`file:${s.file}`);
    try {
      const more = flood(batches.flat().length + 1, 30);
      for (const b of more) await s.services.events.ingest(s.runner, b);
      const store2 = createSegmentStore(db2, createWriterQueue());
      const last = more.at(-1)!.at(-1)!.seq;
      await store2.foldNow(SID, last, true);
      expect(await db2.sessionEvent.count({ where: { sessionId: SID, type: 'TERMINAL_CHUNK' } })).toBe(0);
      expect(await readAll(db2)).toEqual(sentWire([...batches, ...more]));
    } finally {
      await db2.$disconnect();
    }
  }, 120_000);

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
    await s.services.terminalSegments.foldNow(SID, batches.at(-1)!.at(-1)!.seq);

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

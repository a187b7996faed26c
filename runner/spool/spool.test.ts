import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerEventSchema, type RunnerEvent } from '../../protocol';
import { captureLogger, makeTempDir, removeTempDir } from '../testing/fixtures';
import { EventSender, EXPRESS_BATCH_CHARS, MAX_BATCH_EVENTS, MAX_IN_FLIGHT_BATCHES, type EventTransport } from './sender';
import { Spool, type SessionBase } from './spool';
import { decodeRecords } from './spool-file';

const base = (sid: string): SessionBase => ({
  session_id: sid,
  org_id: 'org_test',
  repo_id: 'repo_sample01',
  repo_ref: { provider: 'local', owner: '', name: 'sample' },
});
const A = base('sess_aaaaaaaa');
const B = base('sess_bbbbbbbb');

function chunk(data: string) {
  return { type: 'TERMINAL_CHUNK' as const, data };
}

/** The events a `.spool` file holds (spool-file.ts records). */
function readLines(file: string): RunnerEvent[] {
  if (!fs.existsSync(file)) return [];
  const sid = path.basename(file).replace(/\..*$/, '');
  return decodeRecords(fs.readFileSync(file), sid).records.map((r) => r.event);
}

/** A spool file as runners wrote it before issue 17: one JSON event a line. */
function writeLegacyJsonl(file: string, events: RunnerEvent[], tail = ''): void {
  fs.writeFileSync(file, events.map((e) => `${JSON.stringify(RunnerEventSchema.parse(e))}\n`).join('') + tail);
}

describe('Spool', () => {
  let dir: string;
  let clock: number;
  const log = captureLogger();
  const open = (rewindBytes?: number) => Spool.open(dir, { log, now: () => clock, rewindBytes });

  beforeEach(async () => {
    dir = await makeTempDir('spool');
    clock = 1_700_000_000_000;
  });
  afterEach(() => removeTempDir(dir));

  it('assigns seq per session from 1 and writes each event to the JSONL before returning', async () => {
    const spool = await open();
    const e1 = spool.append(A, chunk('one'))!;
    expect(readLines(path.join(dir, `${A.session_id}.spool`)).map((e) => e.seq)).toEqual([1]);
    const e2 = spool.append(A, chunk('two'))!;
    const b1 = spool.append(B, chunk('other'))!;
    expect([e1.seq, e2.seq, b1.seq]).toEqual([1, 2, 1]);
    expect(e1).toMatchObject({ ...A, ts: clock, type: 'TERMINAL_CHUNK', data: 'one' });
    expect(readLines(path.join(dir, `${A.session_id}.spool`)).map((e) => e.seq)).toEqual([1, 2]);
    spool.close();
  });

  it('drops acked events, ignores stale acks, and rewinds the file once everything is acked', async () => {
    const spool = await open(0);
    for (let i = 0; i < 5; i++) spool.append(A, chunk(`c${i}`));
    spool.ack(A.session_id, 3);
    expect(spool.pendingAfter(A.session_id, 0).map((p) => p.event.seq)).toEqual([4, 5]);
    spool.ack(A.session_id, 2);
    expect(spool.ackedSeq(A.session_id)).toBe(3);
    const jsonl = path.join(dir, `${A.session_id}.spool`);
    expect(readLines(jsonl)).toHaveLength(5);
    const { ino, size } = fs.statSync(jsonl);
    spool.ack(A.session_id, 5);
    expect(spool.pendingCount()).toBe(0);
    expect(readLines(jsonl)).toEqual([]);
    // The next seq survives the rewind, in memory and on disk; the file is written over in place.
    expect(spool.append(A, chunk('after'))!.seq).toBe(6);
    expect(readLines(jsonl).map((e) => e.seq)).toEqual([6]);
    expect(fs.statSync(jsonl)).toMatchObject({ ino, size });
    expect(JSON.parse(fs.readFileSync(path.join(dir, `${A.session_id}.ack`), 'utf8'))).toMatchObject({ acked_seq: 5, last_seq: 5 });
    spool.close();
  });

  it('deletes both files when an ended session is fully acked', async () => {
    const spool = await open();
    spool.append(A, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'COMPLETED', reason: 'done', exit_code: 0 });
    spool.ack(A.session_id, 1);
    expect(spool.has(A.session_id)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([]);
    spool.close();
  });

  it('refuses events after the final state and events that break the schema', async () => {
    const spool = await open();
    expect(spool.append(A, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'FAILED', reason: 'x' })).not.toBeNull();
    expect(spool.append(A, chunk('late'))).toBeNull();
    expect(spool.append(B, { type: 'TERMINAL_CHUNK', data: 'x'.repeat(1_048_577) })).toBeNull();
    expect(spool.append(B, chunk('fine'))!.seq).toBe(1);
    spool.close();
  });

  it('on restart marks a session that was running with OUTPUT_GAP and FAILED, continuing the seq', async () => {
    const first = await open();
    first.append(A, { type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'r' });
    first.append(A, { type: 'SESSION_STATE_CHANGED', from: 'PREPARING_WORKSPACE', to: 'STARTING_PROVIDER', reason: 'r' });
    first.append(A, { type: 'SESSION_STATE_CHANGED', from: 'STARTING_PROVIDER', to: 'RUNNING', reason: 'r' });
    clock += 5_000;
    first.append(A, chunk('last words'));
    const lastTs = clock;
    first.ack(A.session_id, 2);
    first.close();

    clock += 60_000;
    const second = await open();
    const pending = second.pendingAfter(A.session_id, second.ackedSeq(A.session_id)).map((p) => p.event);
    expect(pending.map((e) => [e.seq, e.type])).toEqual([
      [3, 'SESSION_STATE_CHANGED'],
      [4, 'TERMINAL_CHUNK'],
      [5, 'OUTPUT_GAP'],
      [6, 'SESSION_STATE_CHANGED'],
    ]);
    expect(pending[2]).toMatchObject({ type: 'OUTPUT_GAP', down_since: lastTs, reason: expect.stringContaining('after seq 4') });
    expect(pending[3]).toMatchObject({ from: 'RUNNING', to: 'FAILED', reason: 'runner restarted while the session was running' });
    // Its end is recorded: nothing more may be appended, and the next restart adds no second gap.
    expect(second.append(A, chunk('x'))).toBeNull();
    second.close();
    const third = await open();
    expect(third.pendingAfter(A.session_id, 0).map((p) => p.event.seq)).toEqual([3, 4, 5, 6]);
    third.ack(A.session_id, 6);
    expect(fs.readdirSync(dir)).toEqual([]);
    third.close();
  });

  it('a small fully acked file is not rewound on the ack (no file work in the loop); a restart still resends nothing acked', async () => {
    const first = await open();
    for (let i = 0; i < 3; i++) first.append(A, chunk(`c${i}`));
    const jsonl = path.join(dir, `${A.session_id}.spool`);
    const ackFile = path.join(dir, `${A.session_id}.ack`);
    first.ack(A.session_id, 3);
    expect(first.pendingCount()).toBe(0);
    expect(readLines(jsonl)).toHaveLength(3);
    expect(fs.existsSync(ackFile)).toBe(false); // persisted later, throttled
    first.close();
    expect(JSON.parse(fs.readFileSync(ackFile, 'utf8'))).toMatchObject({ acked_seq: 3, last_seq: 3 });
    const second = await open();
    const seqs = second.pendingAfter(A.session_id, 0).map((p) => p.event.seq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(Math.min(...seqs)).toBe(4);
    second.close();
  });

  it('persists acks in place through rewinds and timed flushes (no rename, no temporary file); a crashed runner\'s successor reads the last one', async () => {
    const first = await open(0);
    const ackFile = path.join(dir, `${A.session_id}.ack`);
    first.append(A, chunk('a'));
    first.ack(A.session_id, 1);
    const { ino } = fs.statSync(ackFile);
    for (let i = 2; i <= 20; i++) {
      first.append(A, chunk(`c${i}`));
      first.ack(A.session_id, i);
      expect(fs.readdirSync(dir).sort()).toEqual([`${A.session_id}.ack`, `${A.session_id}.spool`]);
    }
    expect(fs.statSync(ackFile).ino).toBe(ino);
    // The runner dies here: nothing flushed or closed. The next one continues after seq 20.
    const second = await open();
    expect(second.ackedSeq(A.session_id)).toBe(20);
    expect(second.pendingAfter(A.session_id, 0).map((p) => [p.event.seq, p.event.type])).toEqual([
      [21, 'OUTPUT_GAP'],
      [22, 'SESSION_STATE_CHANGED'],
    ]);
    second.close();
    first.close();
  });

  it('continues the seq after a restart even when the file was rewound', async () => {
    const first = await open(0);
    first.append(A, { type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'r' });
    first.append(A, chunk('a'));
    first.ack(A.session_id, 2);
    first.close();
    expect(readLines(path.join(dir, `${A.session_id}.spool`))).toEqual([]);
    const second = await open();
    expect(second.pendingAfter(A.session_id, 2).map((p) => [p.event.seq, p.event.type])).toEqual([
      [3, 'OUTPUT_GAP'],
      [4, 'SESSION_STATE_CHANGED'],
    ]);
    second.close();
  });

  it('drops an ended session that was fully acked, keeps an ended one with unacked events', async () => {
    const first = await open();
    first.append(A, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'COMPLETED', reason: 'done' });
    first.append(B, chunk('x'));
    first.append(B, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'COMPLETED', reason: 'done' });
    first.close();
    // Simulate the ack of A that was persisted just before the crash, files left in place.
    fs.writeFileSync(path.join(dir, `${A.session_id}.ack`), JSON.stringify({ acked_seq: 1 }));
    const second = await open();
    expect(second.has(A.session_id)).toBe(false);
    expect(fs.existsSync(path.join(dir, `${A.session_id}.spool`))).toBe(false);
    expect(second.pendingAfter(B.session_id, 0).map((p) => p.event.type)).toEqual(['TERMINAL_CHUNK', 'SESSION_STATE_CHANGED']);
    second.close();
  });

  it('skips a torn last record left by a crash: a header cut short, or a chunk whose text was cut short', async () => {
    const file = path.join(dir, `${A.session_id}.spool`);
    for (const torn of ['{"type":"TERMINAL_CH', `${JSON.stringify({ ...A, ts: 1, seq: 2, type: 'TERMINAL_CHUNK', bytes: 10 })}\n0123`]) {
      const first = await open();
      first.append(A, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'COMPLETED', reason: 'done' });
      first.close();
      fs.appendFileSync(file, torn);
      const second = await open();
      expect(second.pendingAfter(A.session_id, 0).map((p) => p.event.seq)).toEqual([1]);
      expect(readLines(file)).toHaveLength(1);
      expect(fs.readFileSync(file, 'utf8')).not.toContain(torn);
      second.ack(A.session_id, 1);
      second.close();
      expect(fs.readdirSync(dir)).toEqual([]);
    }
  });

  it('compacts a big file with an acked prefix, then rewinds the compacted file and writes the next lap into it', async () => {
    const file = path.join(dir, `${A.session_id}.spool`);
    const spool = await open(0);
    const mb = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 9; i++) spool.append(A, chunk(mb));
    spool.ack(A.session_id, 8); // past SPOOL_COMPACT_BYTES with seq 9 unacked: rewritten alone
    expect(readLines(file).map((e) => e.seq)).toEqual([9]);
    spool.ack(A.session_id, 9); // all acked: the compacted file is rewound (no descriptor open yet)
    expect(readLines(file)).toEqual([]);
    expect(spool.append(A, chunk('after'))!.seq).toBe(10);
    expect(readLines(file).map((e) => [e.seq, e.type === 'TERMINAL_CHUNK' && e.data])).toEqual([[10, 'after']]);
    spool.close();
  });

  it('after a rewind, a record a crash cut short is not completed by the older lap\'s bytes behind it', async () => {
    const file = path.join(dir, `${A.session_id}.spool`);
    const first = await open(0);
    for (let i = 1; i <= 3; i++) first.append(A, chunk(`${i}`.repeat(1000)));
    first.ack(A.session_id, 3);
    first.append(A, chunk('new'));
    // The runner dies writing seq 5: its header and the first bytes of its text reached the file,
    // and the first lap's records behind them are long enough to fill the 1,000 bytes it announced.
    const raw = fs.readFileSync(file);
    const end = raw.indexOf(0x0a, raw.indexOf('new')) + 1; // behind seq 4's text and its trailer (`\x1e<token>\n`)
    const torn = Buffer.from(`${JSON.stringify({ ...A, ts: clock, seq: 5, type: 'TERMINAL_CHUNK', bytes: 1000 })}\n0123456789`);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, torn, 0, torn.byteLength, end);
    fs.closeSync(fd);
    expect(readLines(file).map((e) => e.seq)).toEqual([4]);
    const second = await open();
    expect(second.pendingAfter(A.session_id, 0).map((p) => [p.event.seq, p.event.type])).toEqual([
      [4, 'TERMINAL_CHUNK'],
      [5, 'OUTPUT_GAP'],
      [6, 'SESSION_STATE_CHANGED'],
    ]);
    expect(second.pendingAfter(A.session_id, 0)[0]!.event).toMatchObject({ data: 'new' });
    second.close();
    first.close();
  });

  it('writes a chunk as a header line and its raw UTF-8 (no JSON escaping), and reads it back byte for byte', async () => {
    const spool = await open();
    const text = 'héllo "wörld" \\ 😀\r\n\x1b[31mred\x1b[0m\n{"type":"TERMINAL_CHUNK"}\n';
    spool.append(A, chunk(text));
    spool.append(A, chunk('ab\ud83d')); // half a surrogate pair: kept as JSON, exactly
    spool.append(A, { type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'r' });
    const raw = fs.readFileSync(path.join(dir, `${A.session_id}.spool`));
    // The lap line first (spool-file.ts), then the records.
    const start = raw.indexOf(0x0a) + 1;
    expect(JSON.parse(raw.toString('utf8', 0, start))).toEqual({ lap: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const header = JSON.parse(raw.toString('utf8', start, raw.indexOf(0x0a, start))) as Record<string, unknown>;
    expect(header).toMatchObject({ seq: 1, type: 'TERMINAL_CHUNK', bytes: Buffer.byteLength(text) });
    expect(header.data).toBeUndefined();
    expect(raw.includes(Buffer.from(text))).toBe(true);
    // The spool keeps the bytes it wrote for the frame that sends them.
    const pending = spool.pendingAfter(A.session_id, 0);
    expect(pending.map((p) => p.utf8?.toString('utf8'))).toEqual([text, undefined, undefined]);
    expect(pending.reduce((n, p) => n + p.size, 0)).toBe(raw.byteLength - start);
    spool.close();
    // After a restart (a gap and FAILED follow), the same three events come back unchanged.
    const second = await open();
    expect(second.pendingAfter(A.session_id, 0).slice(0, 3).map((p) => p.event)).toEqual(pending.map((p) => p.event));
    second.close();
  });

  it('a runner upgraded in place loads the old .jsonl spool, resends its unacked events and continues in .spool', async () => {
    const ev = (seq: number, body: Record<string, unknown>) => ({ ...A, ts: 1_700_000_000_000 + seq, seq, ...body }) as RunnerEvent;
    const old = [
      ev(1, { type: 'SESSION_STATE_CHANGED', from: 'CREATED', to: 'PREPARING_WORKSPACE', reason: 'r' }),
      ev(2, { type: 'SESSION_STATE_CHANGED', from: 'PREPARING_WORKSPACE', to: 'STARTING_PROVIDER', reason: 'r' }),
      ev(3, { type: 'SESSION_STATE_CHANGED', from: 'STARTING_PROVIDER', to: 'RUNNING', reason: 'r' }),
      ev(4, { type: 'TERMINAL_CHUNK', data: 'acked\r\n' }),
      ev(5, { type: 'TERMINAL_CHUNK', data: 'é€😀 unacked\r\n\x1b[0m' }),
      ev(6, { type: 'TERMINAL_CHUNK', data: 'ab\ud83d' }),
    ];
    writeLegacyJsonl(path.join(dir, `${A.session_id}.jsonl`), old, '{"torn');
    fs.writeFileSync(path.join(dir, `${A.session_id}.ack`), JSON.stringify({ acked_seq: 4, last_seq: 6, last_ts: null, last_state: 'RUNNING', base: A }));
    // A finished session of the old runner with everything acked: gone on load.
    writeLegacyJsonl(path.join(dir, `${B.session_id}.jsonl`), [{ ...ev(1, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'COMPLETED', reason: 'done' }), ...B }]);
    fs.writeFileSync(path.join(dir, `${B.session_id}.ack`), JSON.stringify({ acked_seq: 1 }));

    const spool = await open();
    expect(spool.has(B.session_id)).toBe(false);
    const pending = spool.pendingAfter(A.session_id, spool.ackedSeq(A.session_id)).map((p) => p.event);
    expect(pending.slice(0, 2)).toEqual([old[4], old[5]]);
    expect(pending.slice(2).map((e) => e.type)).toEqual(['OUTPUT_GAP', 'SESSION_STATE_CHANGED']);
    expect(fs.readdirSync(dir).sort()).toEqual([`${A.session_id}.ack`, `${A.session_id}.spool`]);
    expect(readLines(path.join(dir, `${A.session_id}.spool`)).map((e) => e.seq)).toEqual([5, 6, 7, 8]);

    // The sender resends them, in order, from the acked seq + 1.
    const sender = new EventSender(spool, log);
    const sent: RunnerEvent[] = [];
    sender.attach((batch, done) => {
      sent.push(...batch);
      done({ ok: true, data: { acked: [{ session_id: A.session_id, seq: batch[batch.length - 1].seq }] } });
    });
    expect(await sender.whenDrained(10_000)).toBe(true);
    expect(sent).toEqual(pending);
    sender.dispose();
    spool.close();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('reads both files when a crash came between writing the .spool and deleting the .jsonl: nothing lost or doubled', async () => {
    const first = await open();
    for (let i = 0; i < 4; i++) first.append(A, chunk(`c${i}`));
    first.close();
    const events = readLines(path.join(dir, `${A.session_id}.spool`));
    writeLegacyJsonl(path.join(dir, `${A.session_id}.jsonl`), events.slice(0, 3));
    const second = await open();
    expect(second.pendingAfter(A.session_id, 0).slice(0, 4).map((p) => p.event)).toEqual(events);
    expect(fs.existsSync(path.join(dir, `${A.session_id}.jsonl`))).toBe(false);
    second.close();
  });

  it('checks a chunk against the schema unless it is for the session fields that already passed it', async () => {
    const spool = await open();
    expect(spool.append(A, chunk('first'))).not.toBeNull();
    // Same session id, different fields: the full schema runs (and refuses the bad id).
    expect(spool.append({ ...A, repo_ref: { ...A.repo_ref }, org_id: 'not an id!' }, chunk('x'))).toBeNull();
    expect(spool.append(A, { type: 'TERMINAL_CHUNK', data: 'x'.repeat(1_048_577) })).toBeNull();
    expect(spool.append(A, { type: 'TERMINAL_CHUNK', data: 42 } as never)).toBeNull();
    const second = spool.append(A, chunk('second'))!;
    expect(second).toEqual({ ...A, ts: clock, seq: 2, type: 'TERMINAL_CHUNK', data: 'second' });
    spool.close();
  });
});

describe('EventSender', () => {
  let dir: string;
  const log = captureLogger();
  beforeEach(async () => {
    dir = await makeTempDir('sender');
  });
  afterEach(() => removeTempDir(dir));

  /** A transport that records batches and answers only when told to. */
  function recorder() {
    const batches: Array<{ batch: RunnerEvent[]; done: (ack: unknown) => void }> = [];
    const transport: EventTransport = (batch, done) => void batches.push({ batch, done: done as (ack: unknown) => void });
    const answer = (i: number) => {
      const highest = new Map<string, number>();
      for (const e of batches[i].batch) highest.set(e.session_id, Math.max(highest.get(e.session_id) ?? 0, e.seq));
      batches[i].done({ ok: true, data: { acked: [...highest].map(([session_id, seq]) => ({ session_id, seq })) } });
    };
    return { batches, transport, answer };
  }
  const tick = () => new Promise((r) => setImmediate(r));

  it('sends everything unacked in order after attach, in batches of at most MAX_BATCH_EVENTS', async () => {
    const spool = await Spool.open(dir, { log });
    for (let i = 0; i < 300; i++) spool.append(A, chunk(`c${i}`));
    spool.append(B, chunk('b'));
    const sender = new EventSender(spool, log);
    const r = recorder();
    sender.attach(r.transport);
    await tick();
    // B's one event is a quiet session's: it goes first, alone; A's backlog goes in regular batches.
    expect(r.batches.map((b) => b.batch.length)).toEqual([1, MAX_BATCH_EVENTS, 300 - MAX_BATCH_EVENTS]);
    expect(r.batches[0].batch[0].session_id).toBe(B.session_id);
    const seqA = r.batches.flatMap((b) => b.batch).filter((e) => e.session_id === A.session_id).map((e) => e.seq);
    expect(seqA).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    r.answer(0);
    r.answer(1);
    r.answer(2);
    expect(spool.pendingCount()).toBe(0);
    sender.dispose();
    spool.close();
  });

  it('forgets in-flight batches on disconnect and resends from the last acked seq + 1', async () => {
    const spool = await Spool.open(dir, { log });
    for (let i = 0; i < 10; i++) spool.append(A, chunk(`c${i}`));
    const sender = new EventSender(spool, log);
    const first = recorder();
    sender.attach(first.transport);
    await tick();
    expect(first.batches[0].batch.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // The server stored 1..4 (say, from an earlier ack), then the connection dropped.
    spool.ack(A.session_id, 4);
    sender.detach();
    spool.append(A, chunk('while down'));
    await tick();
    expect(first.batches).toHaveLength(1);

    const second = recorder();
    sender.attach(second.transport);
    await tick();
    expect(second.batches.flatMap((b) => b.batch.map((e) => e.seq))).toEqual([5, 6, 7, 8, 9, 10, 11]);
    // A late answer from the dead connection is harmless.
    first.answer(0);
    second.answer(0);
    expect(spool.pendingCount()).toBe(0);
    sender.dispose();
    spool.close();
  });

  it('keeps events when the server refuses a batch', async () => {
    const spool = await Spool.open(dir, { log });
    spool.append(A, chunk('x'));
    const sender = new EventSender(spool, log);
    const r = recorder();
    sender.attach(r.transport);
    await tick();
    r.batches[0].done({ ok: false, error: { code: 'BAD_REQUEST', message: 'no' } });
    expect(spool.pendingCount()).toBe(1);
    const again = recorder();
    sender.detach();
    sender.attach(again.transport);
    await tick();
    expect(again.batches[0].batch.map((e) => e.seq)).toEqual([1]);
    sender.dispose();
    spool.close();
  });

  it('keeps a refused batch when a later pipelined batch is stored: acks are the contiguous prefix, events above it stay', async () => {
    const spool = await Spool.open(dir, { log });
    for (let i = 0; i < 2 * MAX_BATCH_EVENTS; i++) spool.append(A, chunk(`c${i}`));
    const sender = new EventSender(spool, log);
    const r = recorder();
    sender.attach(r.transport);
    await tick();
    expect(r.batches).toHaveLength(2);
    // The first batch hit a locked database; the second was stored behind the hole, so the
    // server can only acknowledge the prefix before the hole: nothing.
    r.batches[0].done({ ok: false, error: { code: 'INTERNAL', message: 'database is locked' } });
    r.batches[1].done({ ok: true, data: { acked: [{ session_id: A.session_id, seq: 0 }] } });
    expect(spool.pendingCount()).toBe(2 * MAX_BATCH_EVENTS);
    // Even a server claiming more than a batch carried releases only what that batch carried.
    const again = recorder();
    sender.detach();
    sender.attach(again.transport);
    await tick();
    expect(again.batches[0].batch[0].seq).toBe(1);
    again.batches[0].done({ ok: true, data: { acked: [{ session_id: A.session_id, seq: 10_000 }] } });
    expect(spool.ackedSeq(A.session_id)).toBe(MAX_BATCH_EVENTS);
    expect(spool.pendingAfter(A.session_id, 0).map((p) => p.event.seq)[0]).toBe(MAX_BATCH_EVENTS + 1);
    sender.dispose();
    spool.close();
  });

  it('a small event goes at once while the regular pipeline waits for acks; a big one waits its turn, in order', async () => {
    const spool = await Spool.open(dir, { log });
    const big = 'x'.repeat(EXPRESS_BATCH_CHARS * 2);
    // A flood of big chunks: enough to fill every regular slot, and more behind them.
    for (let i = 0; i < (MAX_IN_FLIGHT_BATCHES + 1) * MAX_BATCH_EVENTS; i++) spool.append(A, chunk(big));
    const sender = new EventSender(spool, log);
    const r = recorder();
    sender.attach(r.transport);
    await tick();
    expect(r.batches).toHaveLength(MAX_IN_FLIGHT_BATCHES);
    const sentA = () => r.batches.flatMap((b) => b.batch).filter((e) => e.session_id === A.session_id).map((e) => e.seq);
    const before = sentA().length;
    // A keystroke's echo in another session: it does not wait for the flood's acks.
    spool.append(B, chunk('k'));
    await tick();
    expect(r.batches).toHaveLength(MAX_IN_FLIGHT_BATCHES + 1);
    expect(r.batches.at(-1)!.batch.map((e) => [e.session_id, e.seq])).toEqual([[B.session_id, 1]]);
    // A's events are big: they wait for the regular pipeline, which goes on after an ack, in order.
    expect(sentA()).toHaveLength(before);
    r.answer(0);
    await tick();
    expect(sentA().length).toBeGreaterThan(before);
    expect(sentA()).toEqual(Array.from({ length: sentA().length }, (_, i) => i + 1));
    sender.dispose();
    spool.close();
  });

  it("a quiet session's event never rides in a regular batch behind a flood's, even with the pipeline free", async () => {
    const spool = await Spool.open(dir, { log });
    const big = 'x'.repeat(EXPRESS_BATCH_CHARS * 2);
    for (let i = 0; i < 3; i++) spool.append(A, chunk(big));
    // Small chunks of a busy session are not express: its backlog as a whole is big.
    spool.append(A, chunk('a'));
    spool.append(B, chunk('k'));
    const sender = new EventSender(spool, log);
    const r = recorder();
    sender.attach(r.transport);
    await tick();
    expect(r.batches.map((b) => b.batch.map((e) => `${e.session_id === A.session_id ? 'A' : 'B'}${e.seq}`))).toEqual([['B1'], ['A1', 'A2', 'A3', 'A4']]);
    sender.dispose();
    spool.close();
  });

  it('whenDrained resolves once everything is acked', async () => {
    const spool = await Spool.open(dir, { log });
    spool.append(A, chunk('x'));
    const sender = new EventSender(spool, log);
    const r = recorder();
    sender.attach(r.transport);
    const drained = sender.whenDrained(5_000);
    await tick();
    r.answer(0);
    await expect(drained).resolves.toBe(true);
    sender.dispose();
    spool.close();
  });
});

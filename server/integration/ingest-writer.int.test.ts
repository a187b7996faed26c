import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestWriter, resolveDbFile } from '../db';
import { WriterReplySchema, type WriterReply } from '../db-writer-messages';
import { startTsWorker } from '../ts-worker';
import { withOutputAsBytes, type StoredChunk } from '../services/repo/stored-chunk';
import { chunkBody, createRunningSessions, openServiceDb, runnerEvents, touchedBody, type ServiceDb } from './service-db';

/**
 * SQLite's ingest writer (server/db-writer.ts, in the thread of db-writer-thread.ts): a runner
 * batch runs on one kept connection, not Prisma's transaction. All or nothing per batch, another
 * writer's lock waited out, a process or writer thread killed mid-transaction leaves nothing
 * stored, and messages to the thread are validated. SQLite only: PostgreSQL keeps Prisma's transaction.
 */

const A = 'sess_writer0001';
const B = 'sess_writer0002';
const onPostgres = !!process.env.AV_TEST_POSTGRES_URL;

describe.skipIf(onPostgres)('ingest writer: one kept SQLite connection per process', () => {
  let s: ServiceDb;
  const events = runnerEvents(() => s.orgId);
  const ev = events.ev;
  const chunk = chunkBody;
  const touched = touchedBody;
  const stored = async () => ({
    events: await s.db.sessionEvent.count(),
    segments: (await s.db.terminalSegment.findMany({ orderBy: [{ sessionId: 'asc' }, { seqFrom: 'asc' }] })).map((x) => [x.sessionId, x.seqFrom, x.seqTo, x.data]),
    rows: (await s.db.session.findMany({ where: { id: { in: [A, B] } }, orderBy: { id: 'asc' }, select: { lastSeq: true, currentRoom: true } })),
  });

  beforeEach(async () => {
    events.reset();
    s = await openServiceDb({ defaultPlan: 'enterprise' });
    await createRunningSessions(s, [A, B]);
  });
  afterEach(() => s.close());

  it('a batch failing part-way stores nothing of it, the service stays up, and the resend is stored once', async () => {
    // The database refuses B's first segment: the batch's event rows and A's output came before it in the transaction.
    await s.db.$executeRawUnsafe(`CREATE TRIGGER refuse_b BEFORE INSERT ON "TerminalSegment" WHEN NEW."sessionId" = '${B}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    const batch = [ev(A, touched('src/a')), ev(A, chunk('a1\r\n')), ev(B, touched('src/b')), ev(B, chunk('b1\r\n'))];
    await expect(s.services.events.ingest(s.runner, batch)).rejects.toThrow(/refused by the test/);
    expect(await stored()).toEqual({ events: 0, segments: [], rows: [{ lastSeq: 0, currentRoom: null }, { lastSeq: 0, currentRoom: null }] });

    await s.db.$executeRawUnsafe('DROP TRIGGER refuse_b');
    const { acked } = await s.services.events.ingest(s.runner, batch);
    expect(acked).toEqual(expect.arrayContaining([{ session_id: A, seq: 2 }, { session_id: B, seq: 2 }]));
    // And once more (a lost ack): nothing doubles.
    await s.services.events.ingest(s.runner, batch);
    expect(await stored()).toEqual({
      events: 2,
      segments: [[A, 2, 2, 'a1\r\n'], [B, 2, 2, 'b1\r\n']],
      rows: [{ lastSeq: 2, currentRoom: 'src/a' }, { lastSeq: 2, currentRoom: 'src/b' }],
    });
  });

  it('waits for another connection holding the write lock, reads go on meanwhile, and the batch is stored once after', async () => {
    const other = new Database(resolveDbFile(s.url));
    try {
      other.exec('BEGIN IMMEDIATE');
      let settled = false;
      const ingest = s.services.events.ingest(s.runner, [ev(A, chunk('x\r\n')), ev(A, touched('src/x'))]).finally(() => (settled = true));
      // Prisma's reads answer while the batch waits (WAL), so the loop was not blocked in the driver.
      expect((await s.db.session.findUniqueOrThrow({ where: { id: A } })).lastSeq).toBe(0);
      expect(settled).toBe(false);
      other.exec('COMMIT');
      expect((await ingest).acked).toEqual([{ session_id: A, seq: 2 }]);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    expect(await stored()).toMatchObject({ events: 1, segments: [[A, 1, 1, 'x\r\n']] });
  });

  it('a process killed inside the ingest transaction leaves nothing stored and the lock free', async () => {
    // A second process writes through its own writer and is killed before COMMIT (as a crash would).
    const script = `
      import { SqliteWriter } from ${JSON.stringify(resolve('server/db-writer.ts'))};
      const w = new SqliteWriter(process.argv[1], []);
      await w.transaction(async (tx) => {
        await tx.$executeRawUnsafe('UPDATE "Session" SET "lastSeq" = 99 WHERE "id" = ?', ${JSON.stringify(A)});
        await tx.$executeRawUnsafe('INSERT INTO "SessionEvent" ("sessionId","seq","type","ts","payload") VALUES (?,1,?,0,?)', ${JSON.stringify(A)}, 'FILE_TOUCHED', '{}');
        console.log('written');
        await new Promise(() => {});
      });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, resolveDbFile(s.url)], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((done, fail) => {
        child.stdout.on('data', (b: Buffer) => b.toString().includes('written') && done());
        child.on('exit', (code) => fail(new Error(`writer child exited early (${code})`)));
      });
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((r) => child.once('exit', r));
    expect(await stored()).toMatchObject({ events: 0, rows: [{ lastSeq: 0 }, { lastSeq: 0 }] });
    const { acked } = await s.services.events.ingest(s.runner, [ev(A, touched('src/k'))]);
    expect(acked).toEqual([{ session_id: A, seq: 1 }]);
  });

  it('the writer thread dying with a batch out: the batch goes to a new thread and is stored once; dying twice, it fails with a clear error, and the resend is stored once', async () => {
    const writer = ingestWriter(s.db)!;
    /** Once the batch is out, the thread dies: it handles the crash after the batch, which waits for the lock. */
    const crashWithBatchOut = async () => {
      await expect.poll(() => writer.requestsOut, { timeout: 60_000 }).toBe(1);
      await writer.crash();
    };
    // Another connection holds the write lock, so each thread is still waiting for it (with timers) when it dies.
    const other = new Database(resolveDbFile(s.url));
    const first = [ev(A, touched('src/a')), ev(A, chunk('a1\r\n')), ev(B, chunk('b1\r\n'))];
    const second = [ev(A, chunk('a2\r\n'))];
    try {
      other.exec('BEGIN IMMEDIATE');
      const ingest = s.services.events.ingest(s.runner, first);
      await crashWithBatchOut();
      other.exec('COMMIT');
      expect((await ingest).acked).toEqual([{ session_id: A, seq: 2 }, { session_id: B, seq: 1 }]);

      other.exec('BEGIN IMMEDIATE');
      const failing = s.services.events.ingest(s.runner, second).catch((err: Error) => err);
      await crashWithBatchOut();
      await crashWithBatchOut();
      expect(String(await failing)).toMatch(/the SQLite ingest writer thread exited .*a new thread takes the next request/);
      other.exec('COMMIT');
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    // The runner resends what was not acked, and a lost ack makes it resend everything once more.
    expect((await s.services.events.ingest(s.runner, second)).acked).toEqual([{ session_id: A, seq: 3 }]);
    await s.services.events.ingest(s.runner, [...first, ...second]);
    expect(await stored()).toEqual({
      events: 1,
      segments: [[A, 2, 2, 'a1\r\n'], [A, 3, 3, 'a2\r\n'], [B, 1, 1, 'b1\r\n']],
      rows: [{ lastSeq: 3, currentRoom: 'src/a' }, { lastSeq: 1, currentRoom: null }],
    });
  });

  it('the writer thread answers a malformed request with an error, stores nothing of it, and goes on', async () => {
    const worker = startTsWorker(new URL('../db-writer-worker.ts', import.meta.url), { workerData: { file: resolveDbFile(s.url), pragmas: [] } });
    const replies: WriterReply[] = [];
    worker.on('message', (r: unknown) => replies.push(WriterReplySchema.parse(r)));
    try {
      const text = ev(A, chunk('ok\r\n'));
      const good = { orgId: s.orgId, events: withOutputAsBytes([text], () => undefined), ids: [A], owners: {} };
      const [bytes] = good.events as StoredChunk[];
      worker.postMessage('not a request');
      worker.postMessage({ kind: 'store', req: 1, batch: { ...good, events: [{ ...bytes, seq: -1 }] } });
      worker.postMessage({ kind: 'screen', req: 2, table: 'Session', row: {} });
      // A chunk goes to the writer as bytes only.
      worker.postMessage({ kind: 'store', req: 3, batch: { ...good, events: [text] } });
      worker.postMessage({ kind: 'store', req: 4, batch: { ...good, events: [{ ...bytes, utf8: 'ok\r\n' }] } });
      // Bytes that are not its text's UTF-8 (not UTF-8 at all, or another length): the transaction fails, nothing stored.
      worker.postMessage({ kind: 'store', req: 5, batch: { ...good, events: [{ ...bytes, utf8: new Uint8Array([0x6f, 0xff, 0x0d, 0x0a]) }] } });
      worker.postMessage({ kind: 'store', req: 6, batch: { ...good, events: [{ ...bytes, chars: 3 }] } });
      worker.postMessage({ kind: 'store', req: 7, batch: good });
      await expect.poll(() => replies.length, { timeout: 60_000 }).toBe(8);
      expect(replies.map((r) => [r.req, r.ok])).toEqual([[null, false], [1, false], [2, false], [3, false], [4, false], [5, false], [6, false], [7, true]]);
      for (const r of replies.slice(0, 5)) expect(!r.ok && r.error.message).toMatch(/malformed request/);
      expect(!replies[5]!.ok && replies[5]!.error.message).toMatch(/invalid|encoded data/i);
      expect(!replies[6]!.ok && replies[6]!.error.message).toMatch(/segment's text is 4 characters long, its chunks say 3/);
    } finally {
      // Closed from its own loop: terminate() could stop it inside a libsql call (see db-writer-thread.ts crash()).
      const exited = new Promise((r) => worker.once('exit', r));
      worker.postMessage({ kind: 'close' });
      await exited;
    }
    expect(await stored()).toMatchObject({ events: 0, segments: [[A, 1, 1, 'ok\r\n']], rows: [{ lastSeq: 1 }, { lastSeq: 0 }] });
  });

  it('output bound as its UTF-8 bytes is stored as the same TEXT: ASCII, accents, CJK, emoji, escapes', async () => {
    const ascii = ['plain ascii\r\n', '\x1b[31mred\x1b[0m\r\n'];
    const wide = ['café ✓ 漢字\r\n', '🙂 and 🚀\r\n'];
    await s.services.events.ingest(s.runner, ascii.map((p) => ev(A, chunk(p))));
    await s.services.events.ingest(s.runner, wide.map((p) => ev(B, chunk(p))));
    const rows = await s.db.$queryRawUnsafe<Array<{ sessionId: string; data: string; kind: string; chars: number | bigint }>>(
      'SELECT "sessionId", "data", typeof("data") AS "kind", "chars" FROM "TerminalSegment" ORDER BY "sessionId"',
    );
    expect(rows.map((r) => [r.sessionId, r.kind, r.data, Number(r.chars)])).toEqual([
      [A, 'text', ascii.join(''), ascii.join('').length],
      [B, 'text', wide.join(''), wide.join('').length],
    ]);
  });

  it('the write-ahead log is checkpointed by the checkpoint thread, not inside the writer\'s commits', async () => {
    const file = resolveDbFile(s.url);
    const before = statSync(file).size;
    // ~6 MB of output: far below the connections' own automatic checkpoint (64 MB of log), so only
    // the checkpoint thread (server/db-checkpointer.ts) can have copied it into the database file.
    const text = `${'y'.repeat(126)}\r\n`.repeat(1024);
    for (let i = 0; i < 48; i++) await s.services.events.ingest(s.runner, [ev(A, chunk(text))]);
    await expect.poll(() => statSync(file).size - before, { timeout: 60_000 }).toBeGreaterThan(40 * text.length); // most of the 48 batches' pages
    expect(await s.db.terminalSegment.aggregate({ where: { sessionId: A }, _sum: { chars: true } })).toEqual({ _sum: { chars: 48 * text.length } });
  });
});

import { z } from 'zod';
import { PeriodSchema, RunnerEventSchema, SessionStateSchema, TerminalChunkSchema } from '../protocol';

/**
 * The messages between the control plane's main thread and the SQLite ingest writer's thread
 * (db-writer-thread.ts ↔ db-writer-worker.ts), validated where they arrive: a malformed one is
 * answered (or logged) as an error and changes nothing. One message carries a whole batch and one
 * answers it, however many statements its transaction runs.
 */

const SessionIdsSchema = z.array(z.string().min(1)).min(1);

const TickOwnerSchema = z.object({ orgId: z.string(), repoId: z.string(), userId: z.string(), kind: z.string() });

/**
 * A TERMINAL_CHUNK as stored (repo/stored-chunk.ts): its text's UTF-8, a view of the batch's
 * SharedArrayBuffer (shared with the main thread, not copied), and the text's length. Bytes that
 * are not UTF-8 of that length fail the batch's transaction when its segment is written.
 */
const StoredChunkSchema = TerminalChunkSchema.omit({ data: true }).extend({
  utf8: z.custom<Uint8Array>((v) => v instanceof Uint8Array, { message: 'must be the text’s UTF-8 bytes' }),
  chars: z.number().int().nonnegative(),
});

/** Every event of a runner batch, a chunk only as bytes (a chunk carrying its text is refused). */
const IngestEventSchema = z.union([
  StoredChunkSchema,
  RunnerEventSchema.refine((e) => e.type !== 'TERMINAL_CHUNK', { message: 'a TERMINAL_CHUNK goes to the writer as utf8 bytes, not data' }),
]);

export const IngestBatchSchema = z.object({
  orgId: z.string().min(1),
  events: z.array(IngestEventSchema).min(1),
  ids: SessionIdsSchema,
  owners: z.record(z.string(), TickOwnerSchema),
});

export const ScreenTableSchema = z.enum(['TerminalSnapshot', 'TerminalSeekPoint']);

export const ScreenRowSchema = z.object({
  sessionId: z.string().min(1),
  seq: z.number().int().nonnegative(),
  ts: z.number(),
  cols: z.number().int().positive(),
  rows: z.number().int().positive(),
  data: z.string(),
});

/** Request ids: each answer names the request it answers. */
const ReqSchema = z.number().int().positive();

// Compiled (z.compile, as handler.ts says why): one of each per batch stored, on both sides.
export const WriterRequestSchema = z.compile(z.discriminatedUnion('kind', [
  /** Store a runner batch in one transaction (repo/ingest-batch.ts). */
  z.object({ kind: z.literal('store'), req: ReqSchema, batch: IngestBatchSchema }),
  /** Store a serialised screen once (repo/terminal-screens.ts). */
  z.object({ kind: z.literal('screen'), req: ReqSchema, table: ScreenTableSchema, row: ScreenRowSchema }),
  /** Forget what the writer learnt of these sessions (read again from the database on their next batch). */
  z.object({ kind: z.literal('forget'), ids: SessionIdsSchema }),
  /** Finish what is queued, close the connection, end the thread. */
  z.object({ kind: z.literal('close') }),
  /** End the thread now, as a crash would, from its event loop (tests: never mid-statement, see db-writer-thread.ts). */
  z.object({ kind: z.literal('crash') }),
]));
export type WriterRequest = z.infer<typeof WriterRequestSchema>;

export const IngestOutcomeSchema = z.object({
  fresh: z.array(z.number().int().nonnegative()),
  changed: z.array(z.string()),
  ticks: z.array(z.object({ sessionId: z.string(), orgId: z.string(), period: PeriodSchema, kind: z.string(), agentSeconds: z.number() })),
  prefixes: z.array(z.tuple([z.string(), z.number().int().nonnegative()])),
  refused: z.array(z.object({ orgId: z.string(), sessionId: z.string(), from: SessionStateSchema, to: SessionStateSchema, reason: z.string() })),
});

/** A failure as the thread saw it: the message and the driver's code (SQLITE_BUSY is retried by the caller). */
export const WriterErrorSchema = z.object({ message: z.string(), code: z.string().optional() });
export type WriterError = z.infer<typeof WriterErrorSchema>;

export const WriterReplySchema = z.compile(z.union([
  z.object({ req: ReqSchema, ok: z.literal(true), outcome: IngestOutcomeSchema.optional() }),
  z.object({ req: ReqSchema, ok: z.literal(false), error: WriterErrorSchema }),
  /** A message the thread could not read (no request to answer): logged by the main thread. */
  z.object({ req: z.null(), ok: z.literal(false), error: WriterErrorSchema }),
]));
export type WriterReply = z.infer<typeof WriterReplySchema>;

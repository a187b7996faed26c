import { z } from 'zod';
import { describeZodError } from '../../../protocol';

/**
 * What crosses the mirror thread's boundary (mirror-thread.ts ⇄ mirror-worker.ts). The thread is
 * inside this process, but a message is still checked where it arrives: a bad one is refused with
 * an error and changes nothing, and neither side crashes on it. The requests travel in batches
 * (one postMessage carries everything the control plane queued for the thread since the last one).
 */

const Id = z.number().int().positive();
const Cells = z.number().int().positive();
const Lines = z.number().int().nonnegative();

// Compiled (z.compile, server/realtime/handler.ts says why): every output write crosses here.
export const MirrorRequestSchema = z.compile(z.discriminatedUnion('kind', [
  /** A new terminal, optionally painted from a stored screen (`data`, serialised). */
  z.object({ kind: z.literal('open'), id: Id, cols: Cells, rows: Cells, scrollback: Lines, data: z.string().optional() }),
  /** Output as text, or as the UTF-8 bytes of whole characters (what the runner sent, when the control plane has them). */
  z.object({ kind: z.literal('write'), id: Id, text: z.union([z.string(), z.custom<Uint8Array>((v) => v instanceof Uint8Array, 'expected a string or a Uint8Array')]) }),
  z.object({ kind: z.literal('resize'), id: Id, cols: Cells, rows: Cells }),
  /**
   * `lazy`: answered when the thread parses that far anyway (seek points, periodic snapshots), not
   * now. `scrollbackIfScrolledOut`: the read is a restore point (a restart repaints it and replays
   * the stored output after it), so when the output queued after it pushes every line out of the
   * buffer, only this many lines of scrollback are read (paced-terminal.ts's `depthIfScrolledOut`).
   */
  z.object({ kind: z.literal('read'), id: Id, req: Id, scrollback: Lines, lazy: z.boolean().optional(), scrollbackIfScrolledOut: Lines.optional() }),
  z.object({ kind: z.literal('close'), id: Id }),
]));
export type MirrorRequest = z.infer<typeof MirrorRequestSchema>;

/**
 * `parsed`: output characters this terminal really parsed up to the read; `skipped`: those it
 * never parsed because they scrolled out first (scroll-out.ts); `scrolledOut`: the read took only
 * `scrollbackIfScrolledOut` lines (a restore point the output after it scrolls out).
 */
export const MirrorReplySchema = z.compile(z.union([
  z.object({ req: Id, cols: Cells, rows: Cells, data: z.string(), parsed: Lines, skipped: Lines, scrolledOut: z.boolean().optional() }),
  z.object({ req: Id, error: z.string() }),
]));
export type MirrorReply = z.infer<typeof MirrorReplySchema>;

/** The read a malformed message was (its `req`, when it has a usable one), so its waiter can be answered. */
export function requestNumber(raw: unknown): number | null {
  const req = (raw as { req?: unknown } | null)?.req;
  return Id.safeParse(req).success ? (req as number) : null;
}

/** Why a message was refused: zod's issues, never the payload. */
export const refusal = (what: string, err: z.ZodError) => `${what} refused: ${describeZodError(err)}`;

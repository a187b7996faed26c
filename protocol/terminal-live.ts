import { z } from 'zod';
import { SessionIdSchema } from './world';

/**
 * Live terminal output to browsers as binary frames (issue 17): the UTF-8 bytes of consecutive
 * TERMINAL_CHUNKs in one Uint8Array, which Socket.IO sends as a binary attachment (no JSON
 * escaping, no string copies) and xterm parses directly. A viewer asks for them with
 * `session:attach { binary: true }`; every other event still comes as `session:events`.
 */

/** One frame never carries more than this: a runner batch is at most 900 000 characters (≤ 4 bytes each in UTF-8). */
export const MAX_TERMINAL_FRAME_BYTES = 4 * 1024 * 1024;

/** Socket.IO hands a binary attachment over as a Buffer (Node) or an ArrayBuffer (browsers). */
const BytesSchema = z
  .union([z.instanceof(Uint8Array), z.instanceof(ArrayBuffer)])
  .transform((b) => (b instanceof Uint8Array ? b : new Uint8Array(b)))
  .refine((b) => b.byteLength <= MAX_TERMINAL_FRAME_BYTES, { message: `a terminal frame is at most ${MAX_TERMINAL_FRAME_BYTES} bytes` });

export const TerminalOutputFrameSchema = z
  .object({
    session_id: SessionIdSchema,
    /** The seq of the first chunk; the others follow one by one. */
    from_seq: z.number().int().positive(),
    /** Byte length of each chunk in `data`, in seq order (a viewer that has some of them skips exactly those). */
    sizes: z.array(z.number().int().min(0)).min(1).max(4096),
    /** Time of the last chunk (epoch ms). */
    ts: z.number(),
    data: BytesSchema,
  })
  .refine((f) => f.sizes.reduce((a, b) => a + b, 0) === f.data.byteLength, { message: 'sizes must add up to the bytes sent' });
export type TerminalOutputFrame = z.output<typeof TerminalOutputFrameSchema>;

export interface TerminalLiveServerToClientEvents {
  /** Live output of an attached session (`binary: true`), in seq order with its `session:events`. */
  'terminal:output': (frame: { session_id: string; from_seq: number; sizes: number[]; ts: number; data: Uint8Array | ArrayBuffer }) => void;
}

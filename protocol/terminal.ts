import { z } from 'zod';
import type { Ack } from './result';
import type { WireEvent } from './ui';
import { SessionIdSchema } from './world';

/** Default lines of scrollback a terminal view and its snapshots keep (TERMINAL_SCROLLBACK changes it). */
export const DEFAULT_TERMINAL_SCROLLBACK = 10_000;

/** A serialised terminal screen (xterm's addon-serialize) through event `seq` at time `ts`. */
export const TerminalScreenSchema = z.object({
  seq: z.number().int().min(0),
  ts: z.number(),
  cols: z.number().int().positive(),
  rows: z.number().int().positive(),
  data: z.string(),
});
export type TerminalScreen = z.infer<typeof TerminalScreenSchema>;

/** Seek to the screen at an event (`seq`) or at a moment (`ts`, epoch ms); exactly one of them. */
export const TerminalSeekSchema = z
  .object({
    session_id: SessionIdSchema,
    seq: z.number().int().min(0).optional(),
    ts: z.number().min(0).optional(),
  })
  .refine((b) => (b.seq === undefined) !== (b.ts === undefined), { message: 'give exactly one of seq or ts' });

/** A page of stored events after `after_seq`, for replay playback. */
export const TerminalHistorySchema = z.object({
  session_id: SessionIdSchema,
  after_seq: z.number().int().min(0),
  limit: z.number().int().min(1).max(2_000).default(500),
});

export const TerminalTimelineRequestSchema = z.object({ session_id: SessionIdSchema });

/** Kinds of moment the scrubber can jump to. */
export const TimelineMarkKindSchema = z.enum(['approval', 'test', 'file', 'error']);
export type TimelineMarkKind = z.infer<typeof TimelineMarkKindSchema>;

export const TimelineMarkSchema = z.object({
  seq: z.number().int().positive(),
  ts: z.number(),
  kind: TimelineMarkKindSchema,
  label: z.string(),
  /** The room the sprite stands in from here on (file touches), for the village's replay. */
  room: z.string().optional(),
});
export type TimelineMark = z.infer<typeof TimelineMarkSchema>;

export const TerminalTimelineSchema = z.object({
  first: z.object({ seq: z.number().int(), ts: z.number() }).nullable(),
  last: z.object({ seq: z.number().int(), ts: z.number() }).nullable(),
  marks: z.array(TimelineMarkSchema),
});
export type TerminalTimeline = z.infer<typeof TerminalTimelineSchema>;

/** /ui requests of the terminal's time travel (merged into UiClientToServerEvents). */
export interface TerminalClientToServerEvents {
  'terminal:seek': (body: z.input<typeof TerminalSeekSchema>, ack: Ack<TerminalScreen>) => void;
  'terminal:history': (body: z.input<typeof TerminalHistorySchema>, ack: Ack<{ events: WireEvent[] }>) => void;
  'terminal:timeline': (body: z.input<typeof TerminalTimelineRequestSchema>, ack: Ack<TerminalTimeline>) => void;
}

export interface TerminalServerToClientEvents {
  /** Attached with `snapshot: true`: the screen to paint first; live events after its seq follow. */
  'session:snapshot': (body: { session_id: string; screen: TerminalScreen; scrollback: number }) => void;
}

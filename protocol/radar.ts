import { z } from 'zod';
import type { Ack } from './result';
import { SessionIdSchema } from './world';

/**
 * Conflict radar (issue 19 item 1): which live sessions (or DTA runs) touch the same files or
 * rooms, what their diffs do there, and whether their branches would merge.
 */
export const RADAR_LIMITS = {
  /** Files compared in one radar:compare; an overlap of more is shown as its first files. */
  MAX_FILES: 200,
  /** Hunks kept per file and side: a popover cannot show more usefully. */
  MAX_HUNKS_PER_FILE: 50,
  /** Lines kept per hunk or conflict region side (the rest is counted, not sent). */
  MAX_HUNK_LINES: 40,
  /** Characters kept per line: a minified file must not fill the socket. */
  MAX_LINE_CHARS: 400,
  /** Conflicted files reported by one merge preview. */
  MAX_CONFLICTS: 200,
} as const;

const LineSchema = z.string().max(RADAR_LIMITS.MAX_LINE_CHARS + 1);
const PathSchema = z.string().min(1).max(4096);

/** One `@@ -old_start,old_lines +new_start,new_lines @@` hunk of a side's diff against the merge base. */
export const RadarHunkSchema = z.object({
  old_start: z.number().int().nonnegative(),
  old_lines: z.number().int().nonnegative(),
  new_start: z.number().int().nonnegative(),
  new_lines: z.number().int().nonnegative(),
  /** Diff lines with their "+"/"-" prefix, at most MAX_HUNK_LINES. */
  lines: z.array(LineSchema).max(RADAR_LIMITS.MAX_HUNK_LINES),
  /** Lines left out of `lines`. */
  more: z.number().int().nonnegative(),
});
export type RadarHunk = z.infer<typeof RadarHunkSchema>;

export const RadarFileHunksSchema = z.object({
  path: PathSchema,
  a: z.array(RadarHunkSchema).max(RADAR_LIMITS.MAX_HUNKS_PER_FILE),
  b: z.array(RadarHunkSchema).max(RADAR_LIMITS.MAX_HUNKS_PER_FILE),
  /** Some hunk of a and some hunk of b change the same (or adjacent) lines of the base. */
  overlapping: z.boolean(),
});
export type RadarFileHunks = z.infer<typeof RadarFileHunksSchema>;

/** A `<<<<<<< … ======= … >>>>>>>` region of a conflicted file in the merged tree. */
export const ConflictRegionSchema = z.object({
  /** 1-based line of the "<<<<<<<" marker in the merged file. */
  line: z.number().int().positive(),
  a: z.array(LineSchema).max(RADAR_LIMITS.MAX_HUNK_LINES),
  b: z.array(LineSchema).max(RADAR_LIMITS.MAX_HUNK_LINES),
});
export type ConflictRegion = z.infer<typeof ConflictRegionSchema>;

export const MergeConflictSchema = z.object({
  path: PathSchema,
  /** git's words: "content", "add/add", "modify/delete", "rename/delete", … */
  kind: z.string().max(100),
  regions: z.array(ConflictRegionSchema).max(RADAR_LIMITS.MAX_HUNKS_PER_FILE),
});
export type MergeConflict = z.infer<typeof MergeConflictSchema>;

export const MergePreviewSchema = z.object({
  clean: z.boolean(),
  merge_base: z.string().max(64),
  /** The two sides as snapshot commits (branch head + the worktree's uncommitted changes). */
  a_commit: z.string().max(64),
  b_commit: z.string().max(64),
  conflicts: z.array(MergeConflictSchema).max(RADAR_LIMITS.MAX_CONFLICTS),
});
export type MergePreview = z.infer<typeof MergePreviewSchema>;

/** Control plane → runner: compare two of its live sessions' worktrees. */
export const RadarCompareCommandSchema = z
  .object({
    session_a: SessionIdSchema,
    session_b: SessionIdSchema,
    /** Files whose hunks to return (the overlap's files). */
    paths: z.array(PathSchema).max(RADAR_LIMITS.MAX_FILES),
    /** Also run `git merge-tree --write-tree` of the two sides. */
    merge: z.boolean(),
  })
  .refine((c) => c.session_a !== c.session_b, { message: 'a session cannot be compared with itself' });
export type RadarCompareCommand = z.infer<typeof RadarCompareCommandSchema>;

export const RadarCompareResultSchema = z.object({
  files: z.array(RadarFileHunksSchema).max(RADAR_LIMITS.MAX_FILES),
  merge: MergePreviewSchema.nullable(),
});
export type RadarCompareResult = z.infer<typeof RadarCompareResultSchema>;

export interface RadarServerToRunnerEvents {
  'radar:compare': (cmd: RadarCompareCommand, ack: Ack<RadarCompareResult>) => void;
}

// ---- control plane ↔ UI ----

/** Who the radar watches: an agent session or a DTA run. */
export const RadarSubjectSchema = z.object({ kind: z.enum(['session', 'dta']), id: z.string() });
export type RadarSubject = z.infer<typeof RadarSubjectSchema>;

export const RadarTimelineEntrySchema = z.object({ subject: z.string(), path: z.string(), ts: z.number() });
export type RadarTimelineEntry = z.infer<typeof RadarTimelineEntrySchema>;

export const RadarOverlapSchema = z.object({
  /** `<a>|<b>` of the two subject ids, sorted: stable across refreshes. */
  id: z.string(),
  repo_id: z.string(),
  a: RadarSubjectSchema,
  b: RadarSubjectSchema,
  /** The room that glows: the directory both worked in (the first shared file's, else the shared directory). */
  room_path: z.string(),
  /** Files both touched while alive. */
  files: z.array(z.string()),
  /** Directories both touched within the radar window (without a shared file). */
  dirs: z.array(z.string()),
  /** Each side's first touch of each shared path, oldest first: who got there first. */
  timeline: z.array(RadarTimelineEntrySchema),
  /** The subject that touched a shared path first. */
  first: z.string(),
});
export type RadarOverlap = z.infer<typeof RadarOverlapSchema>;

export const RadarSnapshotSchema = z.object({ window_ms: z.number().int().positive(), overlaps: z.array(RadarOverlapSchema) });
export type RadarSnapshot = z.infer<typeof RadarSnapshotSchema>;

/** POST /api/radar/compare: hunks of an overlap's files, and with merge=true the merge preview. */
export const RadarCompareBodySchema = z
  .object({ session_a: SessionIdSchema, session_b: SessionIdSchema, merge: z.boolean().default(false) })
  .strict()
  .refine((c) => c.session_a !== c.session_b, { message: 'a session cannot be compared with itself' });
export type RadarCompareBody = z.infer<typeof RadarCompareBodySchema>;

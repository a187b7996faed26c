import { z } from 'zod';
import type { Ack } from './result';
import { DtaRunIdSchema } from './dta';
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

/** A full commit id (git's SHA-1 or SHA-256 object names). */
const CommitSchema = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'must be a full commit id');
const RepoIdSchema = z.string().min(1).max(100);

/**
 * Sizes of the patches that travel for a merge preview. A DTA's stored patch is at most the DTA
 * event's own limit; a session's work sent from another runner is bounded by
 * MAX_REMOTE_PATCH_BYTES so the message stays well under the runner socket's 4 MB frame limit
 * even when JSON escaping doubles some characters.
 */
export const RADAR_PATCH_LIMITS = {
  /** Characters of a patch side in radar:compare (≥ the 2 000 000 a dta_proposed event may carry). */
  MAX_PATCH_CHARS: 2_000_000,
  /** Bytes of `git diff --binary base snapshot` one runner sends for another: more is refused with a clear error. */
  MAX_REMOTE_PATCH_BYTES: 1_500_000,
  /**
   * Commits of one side's history offered to the other runner to find the merge base. Deeper than
   * any live session's own commits on top of the shared history, and 40 KB of ids at most.
   */
  MAX_HISTORY_COMMITS: 1000,
} as const;

/**
 * One side of a comparison as the runner builds it:
 * - `session`: a live session's worktree on this runner, snapshotted (HEAD + uncommitted work);
 * - `patch`: a commit built from `base` + `patch` in a throw-away index: a DTA run's proposal
 *   (`origin: 'dta'`) or another runner's session sent as a binary diff (`origin: 'runner'`).
 */
export const RadarSideSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('session'), id: SessionIdSchema }).strict(),
  z
    .object({
      kind: z.literal('patch'),
      /** The subject this side stands for (a DTA run id or a session id): names the side in errors and commits. */
      id: z.string().min(1).max(100),
      origin: z.enum(['dta', 'runner']),
      base: CommitSchema,
      patch: z.string().max(RADAR_PATCH_LIMITS.MAX_PATCH_CHARS),
    })
    .strict(),
]);
export type RadarSide = z.infer<typeof RadarSideSchema>;

/** Control plane → runner: compare two sides (live worktrees of this runner, or commits built from patches). */
export const RadarCompareCommandSchema = z
  .object({
    /** The repository both sides belong to: its clone here is where patch sides are built. */
    repo_id: RepoIdSchema,
    a: RadarSideSchema,
    b: RadarSideSchema,
    /** Files whose hunks to return (the overlap's files). */
    paths: z.array(PathSchema).max(RADAR_LIMITS.MAX_FILES),
    /** Also run `git merge-tree --write-tree` of the two sides. */
    merge: z.boolean(),
  })
  .strict()
  .refine((c) => c.a.id !== c.b.id, { message: 'a subject cannot be compared with itself' });
export type RadarCompareCommand = z.infer<typeof RadarCompareCommandSchema>;

export const RadarCompareResultSchema = z.object({
  files: z.array(RadarFileHunksSchema).max(RADAR_LIMITS.MAX_FILES),
  merge: MergePreviewSchema.nullable(),
});
export type RadarCompareResult = z.infer<typeof RadarCompareResultSchema>;

/** Control plane → runner: where a live session's history is, to find a merge base with another runner's session. */
export const RadarHistoryCommandSchema = z.object({ repo_id: RepoIdSchema, session_id: SessionIdSchema }).strict();
export type RadarHistoryCommand = z.infer<typeof RadarHistoryCommandSchema>;

export const RadarHistoryResultSchema = z.object({
  /** Where this runner's clone was cloned from (`remote.origin.url`): both runners must hold the same repository. */
  origin: z.string().max(4096),
  /** The session's HEAD and its ancestors, newest first, at most MAX_HISTORY_COMMITS. */
  commits: z.array(CommitSchema).max(RADAR_PATCH_LIMITS.MAX_HISTORY_COMMITS),
});
export type RadarHistoryResult = z.infer<typeof RadarHistoryResultSchema>;

/** Control plane → runner: a live session's work as a binary patch against the merge base with the other side's history. */
export const RadarExportCommandSchema = z
  .object({
    repo_id: RepoIdSchema,
    session_id: SessionIdSchema,
    /** The other runner's clone origin: refused when this runner's differs. */
    origin: z.string().max(4096),
    /** The other side's history, newest first: the first one this clone has anchors the merge base. */
    candidates: z.array(CommitSchema).min(1).max(RADAR_PATCH_LIMITS.MAX_HISTORY_COMMITS),
  })
  .strict();
export type RadarExportCommand = z.infer<typeof RadarExportCommandSchema>;

export const RadarExportResultSchema = z.object({
  base: CommitSchema,
  /** `git diff --binary base snapshot`, at most MAX_REMOTE_PATCH_BYTES bytes. */
  patch: z.string().max(RADAR_PATCH_LIMITS.MAX_PATCH_CHARS),
});
export type RadarExportResult = z.infer<typeof RadarExportResultSchema>;

export interface RadarServerToRunnerEvents {
  'radar:compare': (cmd: RadarCompareCommand, ack: Ack<RadarCompareResult>) => void;
  'radar:history': (cmd: RadarHistoryCommand, ack: Ack<RadarHistoryResult>) => void;
  'radar:export': (cmd: RadarExportCommand, ack: Ack<RadarExportResult>) => void;
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

/** What the UI names for a comparison: a live session or a DTA run, as the radar's overlaps name them. */
export const RadarSubjectRefSchema = z.object({ kind: z.enum(['session', 'dta']), id: z.string().min(1).max(100) }).strict();
export type RadarSubjectRef = z.infer<typeof RadarSubjectRefSchema>;

/**
 * POST /api/radar/compare: hunks of an overlap's files, and with merge=true the merge preview.
 * The older `{ session_a, session_b }` form (two sessions) is still accepted and read as two
 * session subjects.
 */
export const RadarCompareBodySchema = z.preprocess(
  (raw) => {
    if (!raw || typeof raw !== 'object' || !('session_a' in raw || 'session_b' in raw) || 'a' in raw || 'b' in raw) return raw;
    const { session_a, session_b, ...rest } = raw as Record<string, unknown>;
    return { ...rest, a: { kind: 'session', id: session_a }, b: { kind: 'session', id: session_b } };
  },
  z
    .object({ a: RadarSubjectRefSchema, b: RadarSubjectRefSchema, merge: z.boolean().default(false) })
    .strict()
    .refine((c) => c.a.kind !== c.b.kind || c.a.id !== c.b.id, { message: 'a subject cannot be compared with itself' })
    .refine((c) => [c.a, c.b].every((s) => (s.kind === 'session' ? SessionIdSchema : DtaRunIdSchema).safeParse(s.id).success), {
      message: 'each subject id must be a session id (sess_…) or a DTA run id (dta_…) matching its kind',
    }),
);
export type RadarCompareBody = z.infer<typeof RadarCompareBodySchema>;

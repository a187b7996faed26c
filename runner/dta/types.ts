import type { DtaCounts, DtaTool } from '../../protocol';

/**
 * One adapter = two halves:
 * - the *measure* half (counts from file contents, checks on before/after counts) — the only part
 *   the verifier process uses;
 * - the *propose* half (the deterministic transformation) — never called by the verifier.
 * The verifier runs in its own process, reads "before" from git's objects and "after" from disk
 * (or from the patch applied in memory), so it cannot take the adapter's word for anything.
 */

/** Files by path relative to the top level, in byte order. */
export type Files = ReadonlyMap<string, string>;

export interface MeasureContext {
  /** Every file tracked in the tree measured (for link targets that are not in the glob). */
  allFiles: ReadonlySet<string>;
  /** Reads any tracked file in the same state as `files` (HEAD for "before", disk for "after"). */
  read(rel: string): string | undefined;
  /**
   * Which files to parse (link_updater): the verifier passes its own selection, so before and after
   * are counted over the same files; without it the adapter's prefilter decides.
   */
  parse?(rel: string, text: string): boolean;
}

export interface Measure<P = Record<string, unknown>> {
  tool: DtaTool;
  /** The name of the change unit in proposed/applied counts ("link_updates"). */
  unit: string;
  /** Matched when the invocation has no glob. */
  defaultGlob: string[];
  /** JSON Schema of params (ajv, common/ajv.ts). */
  paramsSchema: Record<string, unknown>;
  measure(files: Files, params: P, ctx: MeasureContext): Promise<DtaCounts>;
  /**
   * The adapter's own success condition on the verifier's before/after counts and the number of
   * units the run claims: failures in words (empty = passed), and the check names that ran.
   */
  check(before: DtaCounts, after: DtaCounts, claimedUnits: number): { checks: string[]; failures: string[] };
}

export interface Proposal {
  /** New contents of the files that change (only those). */
  changes: Map<string, string>;
  /** Units of change (`unit` of the measure half). */
  units: number;
  notes: string[];
}

export interface Adapter<P = Record<string, unknown>> {
  measure: Measure<P>;
  summary: string;
  /** Resolves params that need the repository (git renames since a revision) before proposing. */
  prepare?(root: string, params: P): Promise<P>;
  propose(files: Files, params: P, ctx: MeasureContext & { seed: number }): Promise<Proposal>;
  /**
   * The domain the adapter covers for strict-tools sessions: paths whose free-form edits are
   * refused in favour of this DTA.
   */
  domain: string[];
}

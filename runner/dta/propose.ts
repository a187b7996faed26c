import fs from 'node:fs';
import path from 'node:path';
import type { DtaCounts, DtaInvocation } from '../../protocol';
import type { adapterOf } from './adapters';
import { readWithStat, type FileStat } from './file-stat';
import { byteCompare, gitBlobId, globMatcher, treeAt, type TreeAt } from './git-state';
import { buildPatch } from './patch';
import { allowedPathMatcher, type DtaPolicy, type effectiveConstraints } from './policy';
import { RunFailure } from './run-failure';
import { mark } from './stages';
import type { MeasureContext } from './types';

/** What a dry-run proposed, fresh or kept from an earlier dry-run of the same invocation. */
export interface Proposed {
  matched: string[];
  baseline: DtaCounts;
  units: number;
  changes: Map<string, string>;
  changed: string[];
  notes: string[];
  patch: string;
  /** Each changed file as the proposal read it: what the apply checks it against and journals. */
  sources: Map<string, SourceFile>;
  /** HEAD's tree as listed for the proposal (its blob ids: which originals git holds, for the apply's journal). */
  tree?: TreeAt;
}

/**
 * A changed file's original, as the dry-run read it: its git blob id (the apply's journal, for a
 * rollback that checks its backup: atomic-apply.ts) and its stat from the same descriptor, taken
 * before the read at `readAt` — an approved apply tells "unchanged since" from the stat alone
 * (file-stat.ts), without reading and hashing every file again.
 */
export interface SourceFile {
  blob: string;
  stat: FileStat;
  readAt: number;
}

/** discover → propose: reads the files in scope, measures the baseline, and asks the adapter. */
export async function discoverAndPropose(
  root: string,
  inv: DtaInvocation,
  adapter: ReturnType<typeof adapterOf>,
  params: Record<string, unknown>,
  globs: string[],
  policy: DtaPolicy,
  constraints: ReturnType<typeof effectiveConstraints>,
  inTime: (what: string) => void,
): Promise<Proposed> {
  const m = adapter.measure;
  const tree = await treeAt(root, 'HEAD');
  const tracked = tree.paths;
  const allFiles = new Set(tracked);
  const inGlob = globMatcher(globs);
  const allowed = allowedPathMatcher(policy);
  const matched = tracked.filter((f) => inGlob(f) && allowed(f));
  if (matched.length > constraints.max_files) throw new RunFailure('POLICY', `${matched.length} files match, max_files is ${constraints.max_files}`);
  mark('propose: files listed');
  const readAt = Date.now();
  const read = new Map<string, { bytes: Buffer; stat: FileStat }>();
  const files = new Map<string, string>();
  for (const rel of matched) {
    const r = readWithStat(path.join(root, rel));
    read.set(rel, r);
    files.set(rel, r.bytes.toString('utf8'));
  }
  mark('propose: files read');
  const ctx: MeasureContext = {
    allFiles,
    read: (rel) => files.get(rel) ?? (allFiles.has(rel) ? fs.readFileSync(path.join(root, rel), 'utf8') : undefined),
  };
  const baseline = await m.measure(files, params, ctx);
  inTime('discover');
  mark('propose: measured');
  const proposal = await adapter.propose(files, params, { ...ctx, seed: constraints.seed });
  inTime('propose');
  mark('propose: proposed');
  const changed = [...proposal.changes.keys()].sort(byteCompare);
  const sources = new Map<string, SourceFile>();
  for (const rel of changed) {
    const r = read.get(rel);
    if (r) sources.set(rel, { blob: gitBlobId(r.bytes), stat: r.stat, readAt });
    else {
      // A change outside the glob (an adapter may change any tracked file): read now.
      const at = Date.now();
      try {
        const late = readWithStat(path.join(root, rel));
        sources.set(rel, { blob: gitBlobId(late.bytes), stat: late.stat, readAt: at });
      } catch {
        // Unreadable: the apply finds no source for it and proposes again.
      }
    }
  }
  const patch = buildPatch(files, proposal.changes);
  mark('propose: patch built');
  return { matched, baseline, units: proposal.units, changes: proposal.changes, changed, notes: proposal.notes, patch, sources, tree };
}

import fs from 'node:fs';
import path from 'node:path';
import type { DtaCounts, DtaInvocation } from '../../protocol';
import type { adapterOf } from './adapters';
import { byteCompare, globMatcher, sha256, trackedFiles } from './git-state';
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
  sourceHashes: Map<string, string>;
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
  const tracked = await trackedFiles(root);
  const allFiles = new Set(tracked);
  const inGlob = globMatcher(globs);
  const allowed = allowedPathMatcher(policy);
  const matched = tracked.filter((f) => inGlob(f) && allowed(f));
  if (matched.length > constraints.max_files) throw new RunFailure('POLICY', `${matched.length} files match, max_files is ${constraints.max_files}`);
  mark('propose: files listed');
  const files = new Map(matched.map((rel) => [rel, fs.readFileSync(path.join(root, rel), 'utf8')]));
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
  const sourceHashes = new Map(changed.map((rel) => [rel, sha256(files.get(rel) ?? ctx.read(rel) ?? '')]));
  const patch = buildPatch(files, proposal.changes);
  mark('propose: patch built');
  return { matched, baseline, units: proposal.units, changes: proposal.changes, changed, notes: proposal.notes, patch, sourceHashes };
}

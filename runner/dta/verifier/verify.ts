import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
// protocol's DTA module, not its index: the verifier process would evaluate every schema of the
// protocol at each start (bundle.ts).
import { DtaCountsSchema, DtaToolSchema, type DtaCounts, type DtaVerifier } from '../../../protocol/dta';
import { loadMeasure } from '../adapters/measures';
import { byteCompare, globMatcher, headSha, readBlobs, RUNS_DIR, sha256, statusText, treeAt, type TreeAt } from '../git-state';
import { applyPatchInMemory, type KnownPart } from '../patch';
import { mark } from '../stages';
import { hostBytesMatcher } from './host-bytes';
import type { MeasureContext } from '../types';

/**
 * The independent verifier (deterministic-tool-adapters.md "Verifier Recipe"). It gets the run's
 * *claims* and re-measures everything itself: "before" from git's objects at HEAD, "after" from
 * the files on disk (applied) or from the patch applied in memory (dry-run). It never reads the
 * adapter's counts as facts — a claim that disagrees with the files is a failure with its reason.
 */
export const VerifyRequestSchema = z.object({
  mode: z.enum(['proposed', 'applied']),
  tool: DtaToolSchema,
  root: z.string().min(1),
  params: z.record(z.string(), z.unknown()),
  globs: z.array(z.string()).min(1),
  allowed_paths: z.array(z.string()).min(1),
  seed: z.number().int(),
  /** The runner's folder for the verifier's parse memo (memo.ts); absent: nothing is kept across runs. */
  memo_dir: z.string().min(1).optional(),
  claim: z.object({
    head: z.string(),
    baseline: DtaCountsSchema,
    units: z.number().int().nonnegative(),
    files: z.array(z.string()),
    patch_path: z.string(),
    patch_sha256: z.string(),
    /** sha256 of each changed file after apply (applied mode). */
    hashes: z.record(z.string(), z.string()).default({}),
  }),
});
export type VerifyRequest = z.infer<typeof VerifyRequestSchema>;

function sameCounts(a: DtaCounts, b: DtaCounts): string | null {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const diffs = keys.filter((k) => a[k] !== b[k]).map((k) => `${k} claimed ${b[k] ?? 'nothing'}, measured ${a[k] ?? 'nothing'}`);
  return diffs.length ? diffs.join('; ') : null;
}

/** Paths git sees as changed against HEAD (our artifacts folder aside). */
function changedPaths(status: string): string[] {
  const out: string[] = [];
  const parts = status.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i];
    if (entry.length < 4) continue;
    const rel = entry.slice(3);
    if (entry[0] === 'R' || entry[0] === 'C') i++; // the original path follows
    if (!rel.startsWith(`${RUNS_DIR}/`)) out.push(rel);
  }
  return out.sort(byteCompare);
}

/**
 * What the verifier may be told before the adapter claims anything: the invocation's own inputs
 * (never an adapter's output). It measures HEAD with them at once, so its "before" is parsed beside
 * the adapter's discovery instead of after it.
 */
export const PrepareRequestSchema = VerifyRequestSchema.pick({ tool: true, root: true, params: true, globs: true, allowed_paths: true, memo_dir: true }).extend({
  mode: z.literal('prepare'),
  head: z.string().min(1),
});
export type PrepareRequest = z.infer<typeof PrepareRequestSchema>;

/** Tools whose parsed links the memo and the in-process cache keep. */
const LINK_TOOLS = new Set(['link_updater', 'intra_repo_link_fixer']);

/** Memos by folder, opened once per process (a kept verifier serves a dry-run and its apply). */
const memos = new Map<string, Promise<import('./memo').VerifierMemo>>();

/**
 * The memo in this folder, opened at the first ask (or by preloadMemo, before any request). A
 * memo is read once: a request that comes while it is being read waits for that read.
 */
export function memoIn(dir: string): Promise<import('./memo').VerifierMemo> {
  let memo = memos.get(dir);
  if (!memo) {
    memo = import('./memo').then(({ VerifierMemo, VERIFIER_MEMO_FILE }) => VerifierMemo.read(path.join(dir, VERIFIER_MEMO_FILE)));
    memos.set(dir, memo);
  }
  return memo;
}

/** Reads the runner's memo ahead of any request (the process was told its folder when started: spawn.ts). */
export function preloadMemo(dir: string): void {
  void memoIn(dir);
}

async function withMemo<T>(req: Pick<VerifyRequest, 'tool' | 'memo_dir'>, work: () => Promise<T>): Promise<T> {
  if (!LINK_TOOLS.has(req.tool) || !req.memo_dir) return work();
  let memo = await memoIn(req.memo_dir);
  // Read ahead and saved since by another verifier (the run that just ended): read as it is now.
  if (memo.outdated()) {
    memos.delete(req.memo_dir);
    memo = await memoIn(req.memo_dir);
  }
  const { useLinkStore } = await import('../adapters/link-updater/links');
  useLinkStore(memo);
  try {
    return await work();
  } finally {
    useLinkStore(null);
  }
}

/** Writes what this process parsed to its memos; the memo only saves work, so a full disk is no failure. */
export async function saveMemos(): Promise<void> {
  for (const memo of memos.values()) {
    try {
      (await memo).save();
    } catch {
      // nothing lost but time
    }
  }
}

/**
 * HEAD's tree and its files in the glob, read once per process and HEAD: the prepare request
 * reads them, the verify request after it (and the apply's, in a kept verifier) reuses them — git
 * objects do not change under a commit id. One `ls-tree` gives both the paths and the blob ids.
 */
let lastTree: { key: string; tree: Promise<TreeAt> } | null = null;
function treeOf(root: string, head: string): Promise<TreeAt> {
  const key = JSON.stringify([root, head]);
  if (lastTree?.key !== key) {
    const tree = treeAt(root, head);
    lastTree = { key, tree };
    // A failed read is not kept: the next request asks git again.
    tree.catch(() => lastTree?.tree === tree && (lastTree = null));
  }
  return lastTree.tree;
}

let lastBlobs: { key: string; blobs: Promise<Map<string, string>> } | null = null;
async function headBlobsOf(root: string, head: string, matched: string[]): Promise<Map<string, string>> {
  const key = JSON.stringify([root, head, matched]);
  if (lastBlobs?.key !== key) lastBlobs = { key, blobs: treeOf(root, head).then((tree) => readBlobs(root, head, matched, tree)) };
  return lastBlobs.blobs;
}

/** The files in scope, matched once per HEAD and globs (5,000 paths through picomatch: 10-20 ms a time). */
let lastScope: { key: string; scope: { tracked: string[]; matched: string[] } } | null = null;
async function inScope(req: Pick<VerifyRequest, 'root' | 'globs' | 'allowed_paths'>, head: string): Promise<{ tracked: string[]; matched: string[] }> {
  const tracked = (await treeOf(req.root, head)).paths;
  const key = JSON.stringify([req.root, head, req.globs, req.allowed_paths]);
  if (lastScope?.key === key) return lastScope.scope;
  const inGlob = globMatcher(req.globs);
  const allowed = picomatch(req.allowed_paths, { dot: true });
  lastScope = { key, scope: { tracked, matched: tracked.filter((f) => inGlob(f) && allowed(f)) } };
  return lastScope.scope;
}

/** Parses HEAD's files that can hold a link to the old hosts (link_updater); other tools wait for their request. */
export async function prepare(req: PrepareRequest): Promise<void> {
  if (req.tool !== 'link_updater') return;
  const m = await loadMeasure(req.tool);
  await withMemo(req, async () => {
    const { tracked, matched } = await inScope(req, req.head);
    const blobs = await headBlobsOf(req.root, req.head, matched);
    mark('verifier: prepare: HEAD blobs read');
    const could = hostBytesMatcher((req.params.from_hosts as string[] | undefined) ?? []);
    const selected = [...blobs].filter(([, text]) => could(text));
    const parsed = new Set(selected.map(([rel]) => rel));
    const counts = await m.measure(blobs, req.params, { allFiles: new Set(tracked), read: (rel) => blobs.get(rel), parse: (rel) => parsed.has(rel) });
    headMeasured = { key: headMeasureKey(req, req.head), parsed, counts };
    mark('verifier: prepare: HEAD measured');
    // The expectation goes on after the prepare answers, while the verifier waits for the proposal.
    const { expectParts } = await import('./expected-parts');
    const job: Expectation = { key: expectationKey(req.root, req.head, req.params), parts: new Map(), stopped: false, done: Promise.resolve() };
    expected = job;
    job.done = expectParts(
      selected,
      req.params,
      job.parts,
      () => job.stopped,
    ).then(
      () => mark(job.stopped ? `verifier: expectation stopped (${job.parts.size} parts)` : `verifier: expectation made (${job.parts.size} parts)`),
      () => job.parts.clear(),
    );
  });
}

/**
 * link_updater's HEAD as the last prepare measured it: the files its bytes select (host-bytes.ts)
 * and their counts. A request on the same tree, HEAD, scope and hosts whose changed files are all
 * among them selects the same files, so its "before" is these counts (the same bytes, measured by
 * this process) instead of every file's links looked up and counted again.
 */
let headMeasured: { key: string; parsed: Set<string>; counts: DtaCounts } | null = null;
function headMeasureKey(req: Pick<VerifyRequest, 'root' | 'globs' | 'allowed_paths' | 'params'>, head: string): string {
  return JSON.stringify([req.root, head, req.globs, req.allowed_paths, req.params.from_hosts, req.params.to_host]);
}

/**
 * The verifier's own expectation of the proposal (expected-parts.ts) since the last prepare, for
 * its tree, HEAD and hosts: made in the background until the next request stops it.
 */
interface Expectation {
  key: string;
  parts: Map<string, KnownPart>;
  stopped: boolean;
  done: Promise<void>;
}
let expected: Expectation | null = null;
function expectationKey(root: string, head: string, params: Record<string, unknown>): string {
  return JSON.stringify([root, head, params.from_hosts, params.to_host]);
}

/** The patch parts the last prepare expects for this tree, HEAD and hosts (none: it made none for them). */
export function expectedPartsFor(root: string, head: string, params: Record<string, unknown>): ReadonlyMap<string, KnownPart> | undefined {
  return expected?.key === expectationKey(root, head, params) ? expected.parts : undefined;
}

/** Settles when the last prepare's expectation is made or stopped (tests wait for it). */
export function expectationSettled(): Promise<void> {
  return expected?.done ?? Promise.resolve();
}

/**
 * Forgets everything this process learnt from the run it served: HEAD's tree, blobs, scope and
 * measure, and the expectation (stopped, then dropped). What it keeps for the next run is what the
 * memo keeps — links by the whole text they were found in — and nothing keyed by a tree or a claim.
 */
export async function forgetRun(): Promise<void> {
  const job = expected;
  if (job) {
    job.stopped = true;
    await job.done;
  }
  expected = null;
  headMeasured = null;
  lastScope = null;
  lastBlobs = null;
  lastTree = null;
}

export async function verify(req: VerifyRequest): Promise<DtaVerifier> {
  // The proposal came: the expectation stops where it got to (its next batch sees this).
  if (expected) expected.stopped = true;
  const m = await loadMeasure(req.tool);
  return withMemo(req, () => measureAndCheck(req, m));
}

async function measureAndCheck(req: VerifyRequest, m: Awaited<ReturnType<typeof loadMeasure>>): Promise<DtaVerifier> {
  const checks: string[] = ['head_unchanged', 'baseline_matches', 'files_match'];
  const failures: string[] = [];
  const { root, claim } = req;

  // git's answers (HEAD; the status, for an apply), each in its own process, while this one reads.
  const headNow = headSha(root);
  const status = req.mode === 'applied' ? statusText(root) : null;
  for (const p of [headNow, status]) p?.catch(() => undefined);

  const { tracked, matched } = await inScope(req, claim.head);
  const allFiles = new Set(tracked);
  const headBlobs = await headBlobsOf(root, claim.head, matched);
  mark('verifier: HEAD listed, blobs read');
  const readHead = (rel: string): string | undefined => {
    if (headBlobs.has(rel)) return headBlobs.get(rel);
    if (!allFiles.has(rel)) return undefined;
    return execFileSync('git', ['cat-file', 'blob', `${claim.head}:${rel}`], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  };
  let patch = '';
  try {
    patch = fs.readFileSync(claim.patch_path, 'utf8');
  } catch {
    failures.push(`the patch artifact ${claim.patch_path} cannot be read`);
  }
  checks.push('patch_hash');
  if (sha256(patch) !== claim.patch_sha256) failures.push('the patch artifact is not the patch the run proposed (sha256 differs)');

  // What changed, by the verifier's own reading: the patch applied in memory (dry-run), or git
  // status and the bytes on disk (apply).
  let changed: string[];
  let patched = new Map<string, string>();
  const onDiskText = new Map<string, string>();
  const claimed = [...claim.files].sort(byteCompare);
  const readDisk = (rel: string): string | undefined => {
    if (onDiskText.has(rel)) return onDiskText.get(rel);
    try {
      return fs.readFileSync(path.join(root, rel), 'utf8');
    } catch {
      return undefined;
    }
  };
  if (req.mode === 'proposed') {
    checks.push('patch_applies');
    const applied = applyPatchInMemory(patch, readHead, req.tool === 'link_updater' ? expectedPartsFor(root, claim.head, req.params) : undefined);
    if (applied.ok) patched = applied.files;
    else failures.push(applied.reason);
    changed = [...patched.keys()].sort(byteCompare);
    if (JSON.stringify(changed) !== JSON.stringify(claimed)) failures.push(`the patch changes ${changed.length} files, the run claims ${claimed.length}`);
  } else {
    checks.push('hashes_match');
    // git status (its own process, started above) runs while this one reads and hashes the claimed files.
    const notWritten: string[] = [];
    for (const rel of claimed) {
      const want = claim.hashes[rel];
      let got: string | null = null;
      try {
        // Read once: hashed here, measured below.
        const bytes = fs.readFileSync(path.join(root, rel));
        got = sha256(bytes);
        onDiskText.set(rel, bytes.toString('utf8'));
      } catch {
        got = null;
      }
      if (want === undefined || got !== want) notWritten.push(`${rel} is not what the apply wrote (changed between apply and verify)`);
    }
    const onDisk = changedPaths(await status!);
    // Sets: on a 5,000-file apply, includes() on arrays cost 0.4 s of the verifier's CPU.
    const onDiskSet = new Set(onDisk);
    const claimedSet = new Set(claimed);
    const missing = claimed.filter((f) => !onDiskSet.has(f));
    const extra = onDisk.filter((f) => !claimedSet.has(f));
    if (missing.length) failures.push(`partial apply: ${missing.length} claimed files are unchanged on disk (${missing.slice(0, 5).join(', ')})`);
    if (extra.length) failures.push(`files changed that the run did not claim: ${extra.slice(0, 5).join(', ')}`);
    failures.push(...notWritten);
    changed = [...new Set([...claimed, ...onDisk])];
  }

  const head = await headNow;
  if (head !== claim.head) failures.unshift(`HEAD moved from ${claim.head.slice(0, 12)} to ${head.slice(0, 12)} during the run`);
  mark(req.mode === 'proposed' ? 'verifier: patch applied in memory' : 'verifier: status read, files hashed');
  // link_updater: parse, before and after alike, the files whose HEAD bytes can hold a link to
  // the old hosts (host-bytes.ts, the verifier's own test) and every file that changed. Any other
  // file is unchanged and has none of those links, by its bytes.
  let parse: ((rel: string) => boolean) | undefined;
  let reused: DtaCounts | null = null;
  if (req.tool === 'link_updater') {
    checks.push('unparsed_files_hold_no_old_host');
    const prepared = headMeasured?.key === headMeasureKey(req, claim.head) ? headMeasured : null;
    let selected: Set<string>;
    if (prepared) selected = new Set(prepared.parsed);
    else {
      const could = hostBytesMatcher((req.params.from_hosts as string[] | undefined) ?? []);
      selected = new Set([...headBlobs].filter(([, text]) => could(text)).map(([rel]) => rel));
    }
    reused = prepared !== null && changed.every((rel) => selected.has(rel)) ? prepared.counts : null;
    for (const rel of changed) selected.add(rel);
    parse = (rel) => selected.has(rel);
  }
  const beforeCtx: MeasureContext = { allFiles, read: readHead, parse };
  const before = reused ? { ...reused } : await m.measure(headBlobs, req.params, beforeCtx);
  const forged = sameCounts(before, claim.baseline);
  if (forged) failures.push(`baseline does not match the files at HEAD: ${forged}`);
  mark('verifier: before measured');

  // A changed file whose new bytes are HEAD's with only the old hosts swapped has its links known
  // from the parse of HEAD just made (host-rewrite.ts); any other is parsed below.
  if (req.tool === 'link_updater') {
    const { seedHostSwaps } = await import('./host-rewrite');
    seedHostSwaps(changed, readHead, req.mode === 'proposed' ? (rel) => patched.get(rel) : readDisk, req.params, parse ?? (() => true));
  }

  let after: Map<string, string>;
  let readAfter: (rel: string) => string | undefined;
  if (req.mode === 'proposed') {
    after = new Map([...headBlobs].map(([rel, text]) => [rel, patched.get(rel) ?? text]));
    readAfter = (rel) => patched.get(rel) ?? readHead(rel);
  } else {
    // A file left unparsed is unchanged (git status says so, or it is in `changed` and parsed).
    after = new Map(matched.map((rel) => [rel, !parse || parse(rel) ? (readDisk(rel) ?? '') : headBlobs.get(rel)!]));
    readAfter = readDisk;
  }

  mark('verifier: host swaps seeded, after read');
  const afterCounts = await m.measure(after, req.params, { allFiles, read: readAfter, parse });
  mark('verifier: after measured');
  const own = m.check(before, afterCounts, claim.units);
  checks.push(...own.checks);
  failures.push(...own.failures);

  let sample_size = 0;
  const sample = req.params.sample_http as { size: number; timeout_ms?: number } | undefined;
  if (req.tool === 'link_updater' && req.mode === 'applied' && sample) {
    checks.push('no_404s_sampled');
    const { sampleHttp } = await import('./http-sample');
    const r = await sampleHttp(after, claimed, String(req.params.to_host), sample.size, sample.timeout_ms ?? 5000, req.seed);
    sample_size = r.sampled;
    failures.push(...r.failures);
  }
  return { passed: failures.length === 0, checks, failures, sample_size, measured: { before, after: afterCounts } };
}

import crypto from 'node:crypto';
import path from 'node:path';
import { compileSchema, createAjv, describeAjvErrors } from '../../common/ajv';
import { DtaInvocationSchema, DtaOutputSchema, type DtaCounts, type DtaError, type DtaInvocation, type DtaOutput, type DtaVerifier } from '../../protocol';
import { adapterOf } from './adapters';
import { ArtifactWriter } from './artifacts';
import { applyAhead } from './apply-ahead';
import { applyAtomic, recover, type Original } from './atomic-apply';
import { excludeRunsDir, headSha, repoDirs, sha256, treeFingerprint, type RepoDirs } from './git-state';
import { filesStillFit, invocationKey, keepProposal, KEPT_PROPOSAL_TTL_MS, liveStagedDirs, peekProposal, takeProposal, type Fit } from './kept-proposals';
import { DEFAULT_POLICY, effectiveConstraints, PolicyError, takeRateSlot, type DtaPolicy } from './policy';
import { discoverAndPropose, type Proposed } from './propose';
import { RunFailure } from './run-failure';
import { discardStaged, stageContents, sweepStaged } from './staged-contents';
import { mark } from './stages';
import { setSpareMemoDir, VerifierProcess } from './verifier/spawn';

/**
 * One DTA run: discover → propose → (apply) → verify, deterministic and all-or-nothing.
 * Never throws: every failure is an output with ok=false and an error code, JSON only.
 */

/** Where the runner keeps journals and the rate log: inside the git dir, never in the tree. */
export const STATE_DIR = 'agent-village-dta';
/** The verifier always gets at least this long, even when the run used up most of its budget. */
const MIN_VERIFIER_MS = 5_000;

/**
 * Where the verifier keeps its parse memo: the runner's own data folder, which sessions cannot see
 * (set once by runner/main.ts). Unset (a CLI, a test), every verifier parses afresh.
 */
let verifierMemoDir: string | null = null;
export function setVerifierMemoDir(dir: string | null): void {
  verifierMemoDir = dir;
  // Verifiers started from now on read it while they wait for their first request.
  setSpareMemoDir(dir);
}

export interface RunOptions {
  runId?: string;
  policy?: DtaPolicy;
  now?: () => Date;
  /**
   * The caller asks for the approved apply in this process (the gate: run-service.ts,
   * session-dta.ts): the dry-run writes its new contents ahead while its verifier checks them
   * (staged-contents.ts), so the apply only renames them into place.
   */
  stageForApply?: boolean;
  /** Called after each phase (events, the approval card). */
  onPhase?: (phase: 'started' | 'proposed' | 'applied' | 'verified', out: DtaOutput, extra: { patch?: string; files?: string[] }) => void;
}

export function newRunId(): string {
  return `dta_${crypto.randomBytes(9).toString('base64url')}`;
}

const NO_VERIFIER: DtaVerifier = { passed: false, checks: [], failures: ['not verified'], sample_size: 0 };

function zeroUnits(unit: string): DtaCounts {
  return { files: 0, [unit]: 0 };
}

/**
 * Each tool's params schema, compiled once per process: a new Ajv and its compile were ~50 ms of
 * CPU at the start of every run, before its verifier process was started.
 */
const paramsValidators = new Map<string, ReturnType<typeof compileSchema>>();
function paramsValidator(tool: string, schema: Record<string, unknown>): ReturnType<typeof compileSchema> {
  let compiled = paramsValidators.get(tool);
  if (!compiled) paramsValidators.set(tool, (compiled = compileSchema(createAjv(), schema)));
  return compiled;
}

export async function runDta(raw: unknown, opts: RunOptions = {}): Promise<DtaOutput> {
  mark('run: start');
  const runId = opts.runId ?? newRunId();
  const now = opts.now ?? (() => new Date());
  const policy = opts.policy ?? DEFAULT_POLICY;
  const tool = typeof raw === 'object' && raw !== null && typeof (raw as { tool?: unknown }).tool === 'string' ? String((raw as { tool: string }).tool).slice(0, 100) : 'unknown';
  const out: DtaOutput = { tool, ok: false, phase: 'dry-run', run_id: runId, baseline: {}, proposed_changes: {}, applied_changes: {}, files: [], patch_sha256: null, artifacts: [], verifier: NO_VERIFIER, notes: [] };
  let artifacts: ArtifactWriter | null = null;
  const cleanups: Array<() => void> = [];
  try {
    const parsed = DtaInvocationSchema.safeParse(raw);
    if (!parsed.success) throw new RunFailure('BAD_INVOCATION', parsed.error.issues.map((i) => `${i.path.join('.') || '(invocation)'}: ${i.message}`).join('; '));
    const inv: DtaInvocation = parsed.data;
    out.phase = inv.mode === 'apply' ? 'apply' : 'dry-run';
    await execute(inv, runId, policy, now, out, (a) => (artifacts = a), opts, cleanups);
  } catch (err) {
    const code: DtaError['code'] = err instanceof RunFailure ? err.code : err instanceof PolicyError ? 'POLICY' : 'ADAPTER_FAILED';
    out.ok = false;
    out.error = { code, message: (err instanceof Error ? err.message : String(err)).slice(0, 4000) };
  } finally {
    for (const c of cleanups) c();
  }
  out.artifacts = (artifacts as ArtifactWriter | null)?.written ?? out.artifacts;
  return DtaOutputSchema.parse(out);
}

async function execute(
  inv: DtaInvocation,
  runId: string,
  policy: DtaPolicy,
  now: () => Date,
  out: DtaOutput,
  setArtifacts: (a: ArtifactWriter) => void,
  opts: Pick<RunOptions, 'onPhase' | 'stageForApply'>,
  cleanups: Array<() => void>,
): Promise<void> {
  const onPhase = opts.onPhase;
  const adapter = adapterOf(inv.tool);
  const m = adapter.measure;
  const compiled = paramsValidator(inv.tool, m.paramsSchema);
  if (!compiled.ok) throw new RunFailure('ADAPTER_FAILED', `the adapter's params schema does not compile: ${compiled.reason}`);
  let params = structuredClone(inv.params);
  if (!compiled.validate(params)) throw new RunFailure('BAD_INVOCATION', `params: ${describeAjvErrors(compiled.validate.errors, '(params)')}`);
  const constraints = effectiveConstraints(inv, policy);
  const deadline = Date.now() + constraints.timeout_ms;
  const inTime = (what: string) => {
    if (Date.now() > deadline) throw new RunFailure('TIMEOUT', `timeout_ms (${constraints.timeout_ms}) passed during ${what}`);
  };

  let dirs: RepoDirs;
  try {
    dirs = await repoDirs(inv.target.repo_path);
  } catch {
    throw new RunFailure('BAD_INVOCATION', `target.repo_path ${inv.target.repo_path} is not a git work tree`);
  }
  const root = dirs.root;
  mark('run: git dirs read');
  const globs = inv.target.glob === undefined ? m.defaultGlob : Array.isArray(inv.target.glob) ? inv.target.glob : [inv.target.glob];
  const prepareRequest = (head: string) => ({ mode: 'prepare' as const, tool: inv.tool, root, head, params, globs, allowed_paths: policy.allowed_paths, ...(verifierMemoDir ? { memo_dir: verifierMemoDir } : {}) });
  // The rate limit first: a refused run starts nothing.
  takeRateSlot(path.join(dirs.commonDir, STATE_DIR), policy);
  // A run that will want a new verifier process starts it now, and has it measure HEAD's files
  // (git's objects: whatever recover() below does to the work tree, HEAD's blobs stay as they
  // are): its start and its parse run beside the checks below instead of after them.
  let early: VerifierProcess | null = null;
  // Its prepare is sent once git has said what HEAD is, beside the checks below; the run's first
  // verify request waits for it (it comes long after), so the verifier reads them in that order.
  let prepareSent: Promise<void> = Promise.resolve();
  if (inv.mode === 'dry-run' || !inv.expected_patch_sha256) {
    const v = (early = new VerifierProcess(root));
    if (adapter.prepare === undefined) {
      prepareSent = headSha(root).then(
        (head) => v.prepare(prepareRequest(head)),
        // No HEAD (an empty repository): nothing to prepare; the run fails on its own below.
        () => undefined,
      );
    }
    mark('run: verifier started');
  }
  cleanups.push(() => early?.kill());
  const stateDir = path.join(dirs.gitDir, STATE_DIR);
  // A crash in an earlier apply is undone before anything looks at the tree.
  const journalDir = path.join(stateDir, 'journal');
  for (const id of recover(journalDir)) out.notes.push(`rolled back the unfinished apply of ${id}`);
  sweepStaged(stateDir, KEPT_PROPOSAL_TTL_MS, liveStagedDirs());
  excludeRunsDir(dirs.commonDir);
  mark('run: recovered');
  const fingerprint = treeFingerprint(root);
  fingerprint.catch(() => undefined);
  const key = invocationKey({ root, tool: inv.tool, params, globs, seed: constraints.seed, maxFiles: constraints.max_files, allowedPaths: policy.allowed_paths });
  // An approved apply's kept proposal: its files are checked while git reads HEAD and the status
  // (the proposal stays kept until the tree is known clean: a refused run leaves it for the next).
  const approved = inv.mode === 'apply' ? inv.expected_patch_sha256 : undefined;
  const candidate = approved ? peekProposal(key, approved) : null;
  const candidateFiles = candidate ? filesStillFit(candidate, root) : null;
  // A run without a kept proposal to take discovers beside git's status (reading only: a dirty
  // tree is still refused before anything is written, and before its discovery is awaited).
  const discover = async () => {
    const p = adapter.prepare ? await adapter.prepare(root, params) : params;
    return { params: p, proposed: await discoverAndPropose(root, inv, adapter, p, globs, policy, constraints, inTime) };
  };
  const discovering = candidate ? null : discover();
  discovering?.catch(() => undefined);
  // One whose files fit prepares its apply beside git's status (apply-ahead.ts): nothing in the
  // tree is touched until the status says it is the tree the proposal was made from.
  let ahead = candidate && candidateFiles?.ok ? applyAhead(root, journalDir, runId, candidate, candidateFiles.originals) : null;
  cleanups.push(() => void ahead?.stop());
  const fp0 = await fingerprint;
  mark('run: status read');
  if (fp0.status !== '') {
    // Refused: the apply ahead is undone (it never touched the tree) before the run answers.
    await ahead?.stop();
    throw new RunFailure('DIRTY_TREE', `the work tree has uncommitted changes (${fp0.status.split('\0').filter(Boolean).length} paths); commit or stash them first`);
  }

  // An approved apply takes its dry-run's proposal when the tree is still the one it was made from.
  let kept = approved ? takeProposal(key, approved) : null;
  let originals: Map<string, Original> | undefined;
  if (kept) {
    const staged = kept.staged;
    // Taken: what it stages is this run's to rename into place (its writing goes on until the
    // apply is ready for its renames: atomic-apply.ts), and to remove afterwards.
    cleanups.push(() => discardStaged(staged));
    // The files as checked above, unless another run took that proposal meanwhile and this is a newer one.
    const fits: Fit = kept.fingerprint !== fp0.hash ? { ok: false, why: 'HEAD or the status changed since the dry-run' } : kept === candidate && candidateFiles ? candidateFiles : filesStillFit(kept, root);
    if (fits.ok) originals = fits.originals;
    else {
      out.notes.push(`proposed again: ${fits.why}`);
      kept.verifier?.close();
      kept = null;
    }
    mark('apply: kept proposal checked');
  }
  if (ahead && (kept !== ahead.proposal || originals !== ahead.originals)) {
    // Another proposal, or none: the apply ahead goes (its folder is this run's id's), this one applies as before.
    await ahead.stop();
    ahead = null;
  }

  // The verifier process: the one started above, or the dry-run's, kept (or a new one when the kept one is gone).
  let verifier = kept?.verifier?.alive ? kept.verifier : null;
  if (!verifier && early) {
    verifier = early;
    early = null;
  } else if (!verifier) {
    verifier = new VerifierProcess(root);
    if (adapter.prepare === undefined) verifier.prepare(prepareRequest(fp0.head));
  }
  let keptVerifier = false;
  const v = verifier;
  cleanups.push(() => {
    if (keptVerifier) return;
    // A run that failed before asking anything ends its verifier at once (its prepare is moot).
    if (v.asked) v.close();
    else v.kill();
  });

  const artifacts = new ArtifactWriter(root, runId, inv.tool, now());
  setArtifacts(artifacts);
  let proposed: Proposed;
  if (kept) {
    proposed = kept.proposed;
    params = structuredClone(kept.params);
  } else {
    ({ params, proposed } = await (discovering ?? discover()));
  }
  const { matched, changed, patch } = proposed;
  out.baseline = proposed.baseline;
  artifacts.write('baseline.json', { run_id: runId, tool: inv.tool, head: fp0.head, globs, files: matched.length, counts: out.baseline });
  onPhase?.('started', out, { files: matched });
  out.files = changed;
  out.patch_sha256 = sha256(patch);
  out.notes.push(...proposed.notes.slice(0, 200));
  out.proposed_changes = { files: changed.length, [m.unit]: proposed.units };
  out.applied_changes = zeroUnits(m.unit);
  const patchPath = artifacts.write('proposed.patch', patch);
  artifacts.write('proposed.json', { run_id: runId, counts: out.proposed_changes, files: changed, patch_sha256: out.patch_sha256, notes: out.notes });
  mark('run: artifacts written');
  if (inv.expected_patch_sha256 && inv.expected_patch_sha256 !== out.patch_sha256) {
    throw new RunFailure('PATCH_MISMATCH', 'the proposal differs from the patch that was approved (the tree or the parameters changed since the dry-run)');
  }
  const request = (mode: 'proposed' | 'applied', hashes: Record<string, string>) => ({
    mode,
    tool: inv.tool,
    root,
    params,
    globs,
    allowed_paths: policy.allowed_paths,
    seed: constraints.seed,
    ...(verifierMemoDir ? { memo_dir: verifierMemoDir } : {}),
    claim: { head: fp0.head, baseline: out.baseline, units: proposed.units, files: changed, patch_path: artifacts.absolute(patchPath), patch_sha256: out.patch_sha256!, hashes },
  });
  const verifierBudget = () => Math.max(MIN_VERIFIER_MS, deadline - Date.now());

  if (inv.mode === 'dry-run') {
    await prepareSent;
    const checked = verifier.run(request('proposed', {}), verifierBudget());
    // While the verifier checks the proposal, the new contents are written ahead for the apply
    // (in the background: the dry-run answers with the verifier).
    let staged = opts.stageForApply && proposed.changes.size > 0 ? stageContents(root, stateDir, runId, proposed.changes) : null;
    cleanups.push(() => keptVerifier || discardStaged(staged));
    out.verifier = await checked;
    // A proposal its verifier failed goes to no gate: nothing to keep staged for it.
    if (!out.verifier.passed) {
      discardStaged(staged);
      staged = null;
    }
    mark('run: verifier answered');
    artifacts.write('verify.json', { run_id: runId, phase: 'dry-run', verifier: out.verifier });
    out.ok = true;
    // Kept for the apply the gate may allow: it writes these contents and asks this verifier.
    keepProposal({ key, root, patchSha256: out.patch_sha256, fingerprint: fp0.hash, proposed, params, verifier, staged });
    keptVerifier = true;
    onPhase?.('proposed', out, { patch });
    return;
  }

  let applied: Awaited<ReturnType<typeof applyAtomic>>;
  try {
    if (ahead) {
      // The kept proposal's apply, prepared beside the status read above: that read, begun after
      // this run started and answered before any rename, found the tree its dry-run saw.
      onPhase?.('proposed', out, { patch });
      applied = await ahead.go();
    } else {
      // apply: only on the tree the proposal was made from. Read again while the apply prepares
      // its journal and backups (outside the tree): no file is written or renamed until it is checked.
      const unchanged = treeFingerprint(root).then((fp1) => {
        if (fp1.hash !== fp0.hash) throw new RunFailure('TREE_CHANGED', 'the work tree changed during the run (HEAD or status differ from the start); nothing was applied');
        mark('apply: status read again');
      });
      // Settled even when the apply fails before it waits for it.
      unchanged.catch(() => undefined);
      onPhase?.('proposed', out, { patch });
      // The originals' backup is git's objects (HEAD's blobs: the run began on a clean tree). Their
      // old files are freed in the background once the verifier has answered (atomic-apply-held.ts).
      applied = await applyAtomic(root, journalDir, runId, proposed.changes, { head: fp0.head, tree: proposed.tree, originals, staged: kept?.staged, ready: unchanged });
    }
  } catch (err) {
    throw applyFailed(err);
  }
  cleanups.push(() => void applied.releaseOriginals());
  mark('apply: files renamed');
  // The verifier is told what each file holds now: hashed by the dry-run's staging where it got that far.
  const stagedFiles = kept?.staged?.files;
  const hashes = Object.fromEntries(changed.map((rel) => [rel, stagedFiles?.get(rel)?.sha256 ?? sha256(proposed.changes.get(rel)!)]));
  // verify, in its own process, from the page cache while the new contents are flushed to disk:
  // the apply is complete (and reported) only when both are done (atomic-apply.ts).
  mark('apply: hashed');
  await prepareSent;
  const verified = verifier.run(request('applied', hashes), verifierBudget());
  try {
    await applied.durable;
  } catch (err) {
    throw applyFailed(err);
  }
  out.applied_changes = { files: changed.length, [m.unit]: proposed.units };
  out.phase = 'apply';
  artifacts.write('applied.json', { run_id: runId, counts: out.applied_changes, files: changed, sha256: hashes });
  out.ok = true;
  onPhase?.('applied', out, {});
  out.verifier = await verified;
  mark('run: verifier answered');
  out.phase = 'verify';
  artifacts.write('verify.json', { run_id: runId, phase: 'verify', verifier: out.verifier });
  if (out.verifier.passed) onPhase?.('verified', out, {});
}

/** An apply that failed was rolled back: the tree is as before (a RunFailure keeps its own code). */
function applyFailed(err: unknown): RunFailure {
  if (err instanceof RunFailure) return err;
  return new RunFailure('APPLY_FAILED', `apply failed and was rolled back, the tree is as before: ${err instanceof Error ? err.message : String(err)}`);
}

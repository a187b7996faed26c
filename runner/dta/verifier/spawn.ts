import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DtaVerifierSchema, type DtaVerifier } from '../../../protocol';
import { ensureVerifierBundle, freshBundle } from './bundle';
import { VERIFIER_MEMO_DIR_ENV } from './memo-dir';
import type { PrepareRequest, VerifyRequest } from './verify';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
/** Without a fresh bundle, the verifier runs TypeScript through tsx, resolved from here (its cwd may be any repository). */
const TSX = import.meta.resolve('tsx');
/** A folder: each verifier process writes a V8 CPU profile there (profiling the bench; NODE_OPTIONS is not passed on). */
export const VERIFIER_CPU_PROF_ENV = 'AV_DTA_VERIFIER_CPU_PROF';

/**
 * One verifier process for a run — and, kept by the engine, for the apply that follows its
 * dry-run: requests go one JSON line each on stdin, each answered by one DtaVerifier line. Its
 * start (node and its modules, from the prebuilt bundle: bundle.ts) is paid once, and what it parsed itself stays
 * in its own memory for the next request. It reads nothing of the adapter's but the claims it is
 * sent, and re-reads the files for each.
 */
/** Verifier processes not yet exited (a closed one still writes its memo), with their exit. */
const running = new Map<ChildProcessWithoutNullStreams, Promise<void>>();

/** Resolves once every verifier process started so far has exited (the bench counts their CPU). */
export async function verifiersExited(): Promise<void> {
  // An idle verifier is unref'd: waiting for it must keep this process alive.
  for (const child of running.keys()) child.ref();
  await Promise.all([...running.values()]);
}

/**
 * The runner's folder for the verifier's memo (engine.ts), given to each verifier process as it
 * starts: it reads its memo while it waits for its first request (a spare, long before), not at
 * that request, on the dry-run's path (JSON of up to VERIFIER_MEMO_MAX_ENTRIES entries, ~0.15–0.25 s).
 */
let spareMemoDir: string | null = null;
export function setSpareMemoDir(dir: string | null): void {
  spareMemoDir = dir;
}

/** The verifier's command line: the prebuilt bundle, else its TypeScript entry through tsx. */
function startVerifier(bundle: string | null, cwd: string): ChildProcessWithoutNullStreams {
  const profDir = process.env[VERIFIER_CPU_PROF_ENV];
  const prof = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  if (spareMemoDir) env[VERIFIER_MEMO_DIR_ENV] = spareMemoDir;
  else delete env[VERIFIER_MEMO_DIR_ENV];
  return spawn(process.execPath, [...prof, ...(bundle ? [bundle] : ['--import', TSX, MAIN])], { cwd, stdio: ['pipe', 'pipe', 'pipe'], env });
}

/**
 * A spare verifier an earlier run left started for the next one: node and the bundle's modules
 * loaded (~0.12 s of CPU, 0.3–0.9 s of wall time on a loaded machine) before the run that takes it
 * begins, instead of on its critical path — the dry-run waits for its verifier, which measures HEAD
 * only once started. It is a fresh process all the same: it has served no request when it is
 * taken, gets only its run's requests, and ends with that run (nothing carries from one run to the
 * next but what the verifier's own memo keeps). Only from the prebuilt bundle (the sources it was
 * started from must be the ones a new verifier would run), and not kept forever: an idle runner
 * ends it after SPARE_IDLE_MS.
 */
interface Spare {
  child: ChildProcessWithoutNullStreams;
  bundle: string;
  closed: boolean;
  timer: NodeJS.Timeout;
}
let spare: Spare | null = null;
/** A runner idle this long ends its spare verifier (the next run starts one itself). */
export const SPARE_IDLE_MS = 10 * 60_000;

function unrefAll(child: ChildProcessWithoutNullStreams): void {
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void }).unref?.();
}

/**
 * Starts a spare verifier for the next run, unless one is waiting (a run's verifier calls it when
 * closed; a bench before its rounds). Returns the waiting spare's process id (null: none, no bundle).
 */
export function warmVerifier(): number | null {
  if (spare && !spare.closed) return spare.child.pid ?? null;
  const bundle = freshBundle();
  if (!bundle) return null;
  const child = startVerifier(bundle, os.tmpdir());
  const s: Spare = { child, bundle, closed: false, timer: setTimeout(() => dropSpare(s), SPARE_IDLE_MS) };
  s.timer.unref();
  child.on('error', () => (s.closed = true));
  child.on('close', () => (s.closed = true));
  child.stdin.on('error', () => undefined);
  unrefAll(child);
  spare = s;
  return child.pid ?? null;
}

function dropSpare(s: Spare): void {
  if (spare === s) spare = null;
  clearTimeout(s.timer);
  s.child.kill('SIGKILL');
}

/** The spare, if it is alive and runs this bundle; else null (and a stale one is ended). */
function takeSpare(bundle: string | null): ChildProcessWithoutNullStreams | null {
  const s = spare;
  if (!s) return null;
  spare = null;
  clearTimeout(s.timer);
  if (s.closed || s.bundle !== bundle) {
    dropSpare(s);
    return null;
  }
  return s.child;
}

export class VerifierProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: Array<(line: string | null) => void> = [];
  private ended = false;
  private requests = 0;
  private why = '';
  private stderr = '';

  /** Whether it runs from the prebuilt bundle (bundle.ts), not through tsx. */
  readonly prebuilt: boolean;

  constructor(cwd: string) {
    // The bundle when it was built from the sources as they are; else tsx, and a build for the next one.
    const bundle = freshBundle();
    if (!bundle) void ensureVerifierBundle();
    this.prebuilt = bundle !== null;
    this.child = takeSpare(bundle) ?? startVerifier(bundle, cwd);
    this.child.stderr.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString()).slice(-4000)));
    // A child that died before a request was written makes stdin error (EPIPE): 'close' reports it.
    this.child.stdin.on('error', () => undefined);
    createInterface({ input: this.child.stdout }).on('line', (line) => this.answers.shift()?.(line));
    this.child.on('error', (e) => this.end(`the verifier could not start: ${e.message}`));
    const exited = new Promise<void>((resolve) => this.child.on('close', () => resolve()));
    running.set(this.child, exited);
    void exited.then(() => running.delete(this.child));
    this.child.on('close', (code, signal) => this.end(`the verifier ended (${code ?? signal}) without a result: ${this.stderr.trim().split('\n').slice(-3).join(' ')}`));
    this.idle();
  }

  /** Its process id (tests tell a spare taken from a new process by it). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether it was ever sent a verify request (else it parsed nothing worth keeping in its memo). */
  get asked(): boolean {
    return this.requests > 0;
  }

  /** Still running and able to take a request. */
  get alive(): boolean {
    return !this.ended;
  }

  /**
   * What the verifier can measure before the adapter has claimed anything (HEAD's files): it
   * starts on it at once, beside the adapter's own discovery. No answer; the next request waits
   * for it inside the verifier.
   */
  prepare(req: PrepareRequest): void {
    if (this.ended) return;
    this.child.stdin.write(`${JSON.stringify(req)}\n`);
  }

  /** A crash, a timeout (counted from here) or garbage output is a failed verification. */
  run(req: VerifyRequest, timeoutMs: number): Promise<DtaVerifier> {
    const failed = (why: string): DtaVerifier => ({ passed: false, checks: [], failures: [why], sample_size: 0 });
    if (this.ended) return Promise.resolve(failed(this.why));
    this.requests++;
    this.busy();
    return new Promise<DtaVerifier>((resolve) => {
      const timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        this.end(`the verifier did not finish within ${timeoutMs} ms`);
      }, timeoutMs);
      this.answers.push((line) => {
        clearTimeout(timer);
        this.idle();
        if (line === null) return resolve(failed(this.why));
        try {
          const parsed = DtaVerifierSchema.safeParse(JSON.parse(line));
          if (parsed.success) return resolve(parsed.data);
        } catch {
          // fall through
        }
        resolve(failed(`the verifier answered something that is not a verification: ${line.slice(0, 200)}`));
      });
      this.child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  /** No more requests: the verifier ends when its stdin does (after saving its memo). */
  close(): void {
    if (this.ended) return;
    this.child.stdin.end();
    this.idle();
    // This run is done with its verifier: the next run's is started off that run's critical path,
    // once this one has exited (its memo written: the spare reads the memo as it starts).
    void running.get(this.child)?.then(() => warmVerifier());
  }

  /** Ends it now (a run that failed before asking anything). */
  kill(): void {
    if (!this.ended) this.child.kill('SIGKILL');
  }

  private end(why: string): void {
    if (this.ended) return;
    this.ended = true;
    this.why = why;
    for (const answer of this.answers.splice(0)) answer(null);
  }

  /** Waiting for an answer keeps the caller's process alive; an idle verifier never does. */
  private busy(): void {
    this.child.ref();
    (this.child.stdout as unknown as { ref?: () => void }).ref?.();
  }

  private idle(): void {
    this.child.unref();
    (this.child.stdout as unknown as { unref?: () => void }).unref?.();
    (this.child.stderr as unknown as { unref?: () => void }).unref?.();
    (this.child.stdin as unknown as { unref?: () => void }).unref?.();
  }
}

/** Runs one request in a verifier process of its own, which then ends. */
export async function runVerifier(req: VerifyRequest, timeoutMs: number): Promise<DtaVerifier> {
  const v = new VerifierProcess(req.root);
  try {
    return await v.run(req, timeoutMs);
  } finally {
    v.close();
  }
}

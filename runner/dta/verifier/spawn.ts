import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DtaVerifierSchema, type DtaVerifier } from '../../../protocol';
import { ensureVerifierBundle, freshBundle } from './bundle';
import { VERIFIER_MEMO_DIR_ENV } from './memo-dir';
import { EndRunAnswerSchema } from './end-run';
import type { PrepareRequest, VerifyRequest } from './verify';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
/** Without a fresh bundle, the verifier runs TypeScript through tsx, resolved from here (its cwd may be any repository). */
const TSX = import.meta.resolve('tsx');
/** A folder: each verifier process writes a V8 CPU profile there (profiling the bench; NODE_OPTIONS is not passed on). */
export const VERIFIER_CPU_PROF_ENV = 'AV_DTA_VERIFIER_CPU_PROF';

/**
 * One verifier process for a run — and, kept by the engine, for the apply that follows its
 * dry-run: requests go one JSON line each on stdin, each answered by one line. Its start (node and
 * its modules, from the prebuilt bundle: bundle.ts) is paid once, and what it parsed itself stays
 * in its own memory for the next request. It reads nothing of the adapter's but the claims it is
 * sent, and re-reads the files for each.
 *
 * A process that served a run well stays alive as the spare for the next one (warm: V8 has
 * optimised its parsers, which cold take ~3× the CPU), one run at a time: the runner sends it an
 * end-run request, it saves its memo and forgets the run (verify.ts forgetRun), and answers ready.
 * Up to WARM_MAX_RUNS runs or SPARE_IDLE_MS idle; after a crash, a timeout, garbage output or a
 * new bundle it ends instead, and a fresh spare is started.
 */
class Channel {
  private readonly answers: Array<(line: string | null) => void> = [];
  private stderr = '';
  ended = false;
  why = '';
  /** Runs it served (a VerifierProcess each). */
  runs = 0;
  /** It answered something that was not an answer: not trusted with another run. */
  faulted = false;
  readonly exited: Promise<void>;

  constructor(
    readonly child: ChildProcessWithoutNullStreams,
    /** The bundle it runs (null: through tsx, never kept warm). */
    readonly bundle: string | null,
  ) {
    child.stderr.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString()).slice(-4000)));
    // A child that died before a request was written makes stdin error (EPIPE): 'close' reports it.
    child.stdin.on('error', () => undefined);
    createInterface({ input: child.stdout }).on('line', (line) => this.answers.shift()?.(line));
    child.on('error', (e) => this.end(`the verifier could not start: ${e.message}`));
    this.exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    child.on('close', (code, signal) => this.end(`the verifier ended (${code ?? signal}) without a result: ${this.stderr.trim().split('\n').slice(-3).join(' ')}`));
    this.idle();
  }

  send(req: unknown): void {
    if (!this.ended) this.child.stdin.write(`${JSON.stringify(req)}\n`);
  }

  /** The request's answer line; null if the process ended (or was ended after timeoutMs) first. */
  ask(req: unknown, timeoutMs: number): Promise<string | null> {
    if (this.ended) return Promise.resolve(null);
    this.busy();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        this.end(`the verifier did not finish within ${timeoutMs} ms`);
      }, timeoutMs);
      this.answers.push((line) => {
        clearTimeout(timer);
        this.idle();
        resolve(line);
      });
      this.send(req);
    });
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

  idle(): void {
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) (stream as unknown as { unref?: () => void }).unref?.();
  }
}

/** A warm verifier serves this many runs, then ends (a fresh spare takes over). */
export const WARM_MAX_RUNS = 50;
/** How long a verifier may take to save its memo and forget its run before it is ended instead. */
const END_RUN_MS = 60_000;

/** Verifier processes serving a run or closing one, each with when it settles (exited, or back as the spare). */
const running = new Map<Channel, Promise<void>>();

/**
 * Resolves once every verifier process a run took has exited or is back as the warm spare — its
 * memo written either way (the bench counts its CPU; tests read the memo).
 */
export async function verifiersExited(): Promise<void> {
  // An idle verifier is unref'd: waiting for it must keep this process alive.
  for (const ch of running.keys()) ch.child.ref();
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
function startVerifier(bundle: string | null, cwd: string): Channel {
  const profDir = process.env[VERIFIER_CPU_PROF_ENV];
  const prof = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  if (spareMemoDir) env[VERIFIER_MEMO_DIR_ENV] = spareMemoDir;
  else delete env[VERIFIER_MEMO_DIR_ENV];
  return new Channel(spawn(process.execPath, [...prof, ...(bundle ? [bundle] : ['--import', TSX, MAIN])], { cwd, stdio: ['pipe', 'pipe', 'pipe'], env }), bundle);
}

/**
 * The spare verifier for the next run: the last run's, warm, or one started ahead (node and the
 * bundle's modules loaded, ~0.12 s of CPU, 0.3–0.9 s of wall time on a loaded machine) before the
 * run that takes it begins, instead of on its critical path — the dry-run waits for its verifier,
 * which measures HEAD only once started. It has no request of an earlier run pending, gets only its
 * run's requests, and carries nothing from one run to the next but what its memo keeps. Only from
 * the prebuilt bundle (the sources it was started from must be the ones a new verifier would run),
 * and not kept forever: an idle runner ends it after SPARE_IDLE_MS.
 */
interface Spare {
  ch: Channel;
  timer: NodeJS.Timeout;
}
let spare: Spare | null = null;
/** A runner idle this long ends its spare verifier (the next run starts one itself). */
export const SPARE_IDLE_MS = 10 * 60_000;

/** Makes this process the spare (ending a spare already waiting: a warm one is worth more). */
function park(ch: Channel): void {
  if (spare && spare.ch !== ch) dropSpare(spare);
  const s: Spare = { ch, timer: setTimeout(() => dropSpare(s), SPARE_IDLE_MS) };
  s.timer.unref();
  ch.idle();
  spare = s;
}

/**
 * Starts a spare verifier for the next run, unless one is waiting (a run's verifier that cannot be
 * kept calls it once exited; a bench before its rounds). Returns the spare's process id (null:
 * none, no bundle).
 */
export function warmVerifier(): number | null {
  if (spare && !spare.ch.ended) return spare.ch.child.pid ?? null;
  const bundle = freshBundle();
  if (!bundle) return null;
  park(startVerifier(bundle, os.tmpdir()));
  return spare!.ch.child.pid ?? null;
}

/** The waiting spare's process id, if any (the bench reads its CPU from /proc). */
export function spareVerifierPid(): number | null {
  return spare && !spare.ch.ended ? (spare.ch.child.pid ?? null) : null;
}

/** Ends the waiting spare, if any (the next run starts a fresh verifier). */
export function endSpareVerifier(): void {
  if (spare) dropSpare(spare);
}

function dropSpare(s: Spare): void {
  if (spare === s) spare = null;
  clearTimeout(s.timer);
  s.ch.child.kill('SIGKILL');
}

/** The spare, if it is alive and runs this bundle; else null (and a stale one is ended). */
function takeSpare(bundle: string | null): Channel | null {
  const s = spare;
  if (!s) return null;
  spare = null;
  clearTimeout(s.timer);
  if (s.ch.ended || s.ch.bundle !== bundle) {
    dropSpare(s);
    return null;
  }
  return s.ch;
}

export class VerifierProcess {
  private readonly ch: Channel;
  private requests = 0;
  private closed = false;

  /** Whether it runs from the prebuilt bundle (bundle.ts), not through tsx. */
  readonly prebuilt: boolean;

  constructor(cwd: string) {
    // The bundle when it was built from the sources as they are; else tsx, and a build for the next one.
    const bundle = freshBundle();
    if (!bundle) void ensureVerifierBundle();
    this.prebuilt = bundle !== null;
    this.ch = takeSpare(bundle) ?? startVerifier(bundle, cwd);
    // Settles when the process exits, unless close() parks it as the spare first.
    running.set(this.ch, this.ch.exited);
    void this.ch.exited.then(() => running.delete(this.ch));
  }

  /** Its process id (tests tell a spare taken from a new process by it). */
  get pid(): number | undefined {
    return this.ch.child.pid;
  }

  /** Whether it was ever sent a verify request (else it parsed nothing worth keeping in its memo). */
  get asked(): boolean {
    return this.requests > 0;
  }

  /** Still running and able to take a request. */
  get alive(): boolean {
    return !this.ch.ended && !this.closed;
  }

  /**
   * What the verifier can measure before the adapter has claimed anything (HEAD's files): it
   * starts on it at once, beside the adapter's own discovery. No answer; the next request waits
   * for it inside the verifier.
   */
  prepare(req: PrepareRequest): void {
    if (!this.closed) this.ch.send(req);
  }

  /** A crash, a timeout (counted from here) or garbage output is a failed verification. */
  async run(req: VerifyRequest, timeoutMs: number): Promise<DtaVerifier> {
    const failed = (why: string): DtaVerifier => ({ passed: false, checks: [], failures: [why], sample_size: 0 });
    if (this.closed) return failed('the verifier was closed');
    if (this.ch.ended) return failed(this.ch.why);
    this.requests++;
    const line = await this.ch.ask(req, timeoutMs);
    if (line === null) return failed(this.ch.why);
    try {
      const parsed = DtaVerifierSchema.safeParse(JSON.parse(line));
      if (parsed.success) return parsed.data;
    } catch {
      // fall through
    }
    this.ch.faulted = true;
    return failed(`the verifier answered something that is not a verification: ${line.slice(0, 200)}`);
  }

  /**
   * No more requests of this run: the verifier saves its memo and becomes the next run's warm
   * spare, or, when it may not serve another run, ends (with its stdin) and a fresh spare is
   * started once it has exited (its memo written: the spare reads the memo as it starts).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const ch = this.ch;
    ch.runs++;
    const settled = this.keepWarm(ch).then((kept) => {
      if (kept) return park(ch);
      ch.child.stdin.end();
      void ch.exited.then(() => warmVerifier());
      return ch.exited;
    });
    running.set(ch, settled);
    void settled.then(() => running.get(ch) === settled && running.delete(ch));
  }

  /** Whether the process closed its run well and may serve the next one. */
  private async keepWarm(ch: Channel): Promise<boolean> {
    if (ch.ended || ch.faulted || ch.runs >= WARM_MAX_RUNS || ch.bundle === null || freshBundle() !== ch.bundle) return false;
    const line = await ch.ask({ mode: 'end-run' }, END_RUN_MS);
    if (line === null) return false;
    try {
      return EndRunAnswerSchema.safeParse(JSON.parse(line)).data?.ready === true;
    } catch {
      return false;
    }
  }

  /** Ends it now (a run that failed before asking anything). */
  kill(): void {
    if (this.closed) return; // its process may serve another run by now
    this.closed = true;
    if (!this.ch.ended) this.ch.child.kill('SIGKILL');
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

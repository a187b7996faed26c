import { spawn } from 'node:child_process';
import { DETERMINISTIC_LIMITS } from '../../../protocol';

/** After SIGTERM at the timeout, the command's process group gets this long before SIGKILL. */
export const KILL_GRACE_MS = 2_000;
/** Once the command exited, its pipes get this long to drain (a leftover grandchild may hold them). */
const DRAIN_AFTER_EXIT_MS = 1_000;

export interface RunCommandOptions {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the command's stdin, which is then closed (the parameters as JSON). */
  stdin: string;
  timeoutMs: number;
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
  /** Stops the command early (the runner is shutting down): SIGTERM to its group, SIGKILL after the grace. */
  signal?: AbortSignal;
}

export interface CommandOutcome {
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The program could not be started (ENOENT, EACCES…). */
  spawnError: string | null;
  durationMs: number;
}

/**
 * Runs argv directly (no shell) in its own process group, feeds it `stdin`, keeps at most
 * `maxStdoutBytes` of stdout (the rest is read and dropped, so the command never blocks on a full
 * pipe) and the tail of stderr, and ends the whole group at the timeout.
 */
export function runCommand(opts: RunCommandOptions): Promise<CommandOutcome> {
  const maxOut = opts.maxStdoutBytes ?? DETERMINISTIC_LIMITS.MAX_STDOUT_BYTES;
  const maxErr = opts.maxStderrBytes ?? DETERMINISTIC_LIMITS.MAX_STDERR_BYTES;
  const started = Date.now();
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    let outBytes = 0;
    let truncated = false;
    let err = Buffer.alloc(0);
    let timedOut = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | null = null;
    let drainTimer: NodeJS.Timeout | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

    const child = spawn(opts.argv[0]!, opts.argv.slice(1), {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // its own process group: the timeout ends everything it started
      shell: false,
    });

    const group = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };

    const finish = (spawnError: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      if (drainTimer) clearTimeout(drainTimer);
      const sig = exit?.signal ?? null;
      resolve({
        stdout: new TextDecoder().decode(Buffer.concat(out)),
        stderr: new TextDecoder().decode(err),
        stdoutTruncated: truncated,
        exitCode: spawnError ? null : (exit?.code ?? null),
        signal: sig ? sig : null,
        timedOut,
        spawnError,
        durationMs: Date.now() - started,
      });
    };

    const stop = () => {
      if (killTimer || exit) return;
      group('SIGTERM');
      killTimer = setTimeout(() => group('SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, opts.timeoutMs);
    if (opts.signal?.aborted) stop();
    opts.signal?.addEventListener('abort', stop, { once: true });

    child.stdout.on('data', (b: Buffer) => {
      if (outBytes >= maxOut) {
        truncated = true;
        return;
      }
      const room = maxOut - outBytes;
      if (b.length > room) {
        out.push(b.subarray(0, room));
        outBytes = maxOut;
        truncated = true;
      } else {
        out.push(b);
        outBytes += b.length;
      }
    });
    child.stderr.on('data', (b: Buffer) => {
      err = Buffer.concat([err, b]);
      if (err.length > maxErr) err = err.subarray(err.length - maxErr);
    });
    // A command that never reads stdin closes it early: that is not an error of the run.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin);

    child.on('error', (e: NodeJS.ErrnoException) => {
      finish(e.code === 'ENOENT' ? `${opts.argv[0]}: command not found` : e.code === 'EACCES' ? `${opts.argv[0]}: permission denied` : e.message);
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Whatever it left running in its group ends with it.
      group('SIGKILL');
      drainTimer = setTimeout(() => finish(null), DRAIN_AFTER_EXIT_MS);
    });
    child.on('close', () => {
      if (exit) finish(null);
    });
  });
}

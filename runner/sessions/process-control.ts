import os from 'node:os';
import type { IPty } from 'node-pty';
import { spawnLed } from '../pty/led-pty';
import type { Logger } from '../log';
import { sessionProcessStates, signalSessionTree } from '../pty/process-tree';
import type { LaunchCommand } from './launch-plan';

/** Time a stopping process gets to clean up after SIGTERM before the whole group gets SIGKILL. */
export const STOP_GRACE_MS = 3_000;
/** A process forking while the pause signals go out can escape one pass; a few passes catch it. */
const PAUSE_SIGNAL_PASSES = 3;

const SIGNAL_NAMES = new Map<number, string>(Object.entries(os.constants.signals).map(([name, n]) => [n, name]));

export function signalName(signal: number): string | null {
  return signal ? (SIGNAL_NAMES.get(signal) ?? `signal ${signal}`) : null;
}

export interface ProcessHandlers {
  data: (data: string) => void;
  exit: (exitCode: number, signal: number) => void;
}

/**
 * The session's process group on a PTY: spawn, input, resize, pause/resume (SIGSTOP/SIGCONT of
 * every process it started) and stop (SIGTERM + SIGHUP, a grace period, then SIGKILL of all).
 */
export class ProcessControl {
  private pty: IPty | null = null;
  /** Kept after the PTY is released: the session reports it, and exit clean-up signals its tree. */
  private pidValue: number | null = null;
  private exitedFlag = false;
  private killTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sessionId: string,
    private readonly log: Logger,
    private readonly stopGraceMs = STOP_GRACE_MS,
  ) {}

  get pid(): number | null {
    return this.pidValue;
  }

  get exited(): boolean {
    return this.exitedFlag;
  }

  /** The PTY process is running. */
  get alive(): boolean {
    return this.pty !== null && !this.exitedFlag;
  }

  /**
   * The leader is bubblewrap (runner/sandbox): a stop signals what runs inside it, gives it the
   * grace period, then kills bubblewrap, and with it the whole PID namespace.
   */
  private sandboxed = false;

  spawn(exec: LaunchCommand, opts: { cwd: string; env: Record<string, string>; cols: number; rows: number; sandboxed?: boolean }, on: ProcessHandlers): number {
    this.sandboxed = opts.sandboxed === true;
    // The session leader in front of the command (sandbox included) makes the end of output
    // deterministic: onExit fires only once every byte was read (runner/pty/led-pty.ts).
    const pty = spawnLed(exec.file, exec.args, { name: 'xterm-256color', cols: opts.cols, rows: opts.rows, cwd: opts.cwd, env: opts.env });
    this.pty = pty;
    this.pidValue = pty.pid;
    pty.onData(on.data);
    pty.onExit(({ exitCode, signal }) => {
      if (this.exitedFlag) return;
      this.exitedFlag = true;
      if (this.killTimer) clearTimeout(this.killTimer);
      this.killTimer = null;
      on.exit(exitCode, signal ?? 0);
    });
    return pty.pid;
  }

  write(data: string): void {
    this.pty?.write(data);
  }

  resize(cols: number, rows: number): void {
    this.pty?.resize(cols, rows);
  }

  /** Flow control: stop / resume reading the PTY. */
  pauseReading(): void {
    this.pty?.pause();
  }

  resumeReading(): void {
    this.pty?.resume();
  }

  /** SIGSTOP to every process of the session. */
  pause(): void {
    const pid = this.pid;
    if (pid === null) return;
    signalSessionTree(pid, 'SIGSTOP');
    for (let i = 1; i < PAUSE_SIGNAL_PASSES; i++) {
      // Delivery is asynchronous, so a process may still show as running; a second SIGSTOP is harmless.
      if ([...sessionProcessStates(pid).values()].every((st) => st === 'T')) break;
      signalSessionTree(pid, 'SIGSTOP');
    }
  }

  /** SIGCONT, jobs before their shell. */
  resume(): void {
    if (this.pid !== null) signalSessionTree(this.pid, 'SIGCONT', { leaderLast: true });
  }

  /** SIGTERM + SIGHUP now, SIGKILL of everything after the grace period. */
  terminate(wasPaused: boolean): void {
    const pid = this.pid;
    if (!this.alive || pid === null) return;
    if (this.sandboxed) {
      signalSessionTree(pid, 'SIGTERM', { spareLeader: true });
      signalSessionTree(pid, 'SIGHUP', { spareLeader: true });
      if (wasPaused) signalSessionTree(pid, 'SIGCONT', { leaderLast: true });
      return this.killAfterGrace(pid);
    }
    signalSessionTree(pid, 'SIGTERM');
    // An interactive bash ignores SIGTERM by design; SIGHUP is what a closed terminal sends,
    // and it makes the shell exit and hang up its jobs.
    try {
      process.kill(pid, 'SIGHUP');
    } catch {
      // Already gone.
    }
    // Stopped processes only act on SIGTERM/SIGHUP once continued (the signals stay pending).
    if (wasPaused) signalSessionTree(pid, 'SIGCONT', { leaderLast: true });
    this.killAfterGrace(pid);
  }

  private killAfterGrace(pid: number): void {
    const grace = this.stopGraceMs;
    this.killTimer = setTimeout(() => {
      this.killTimer = null;
      if (!this.exitedFlag) {
        this.log.info(`session ${this.sessionId} still alive after ${grace} ms; SIGKILL to its process group`);
        signalSessionTree(pid, 'SIGKILL');
      }
    }, grace);
  }

  /** Everything the session started, at once (exit clean-up, a start that could not be reported). */
  killAll(): void {
    if (this.pid !== null) signalSessionTree(this.pid, 'SIGKILL');
  }

  /** The process is gone; forget the PTY. */
  release(): void {
    this.pty = null;
  }
}

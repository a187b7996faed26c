import { fileURLToPath } from 'node:url';
import { spawn, type IDisposable, type IPty, type IPtyForkOptions } from 'node-pty';
import { LeaderStream } from './leader-stream';
import { readPty } from './pty-reader';

/** The session-leader program (plain JavaScript, run by this runner's own node). */
export const SESSION_LEADER_PATH = fileURLToPath(new URL('./session-leader.mjs', import.meta.url));
/** Signal the runner sends the leader once it has read the end marker. */
const READ_ALL_SIGNAL = 'SIGUSR1';

/**
 * `node-pty.spawn` with the session leader in front of the command (issue 11 item 12): the
 * returned PTY's `onData` never shows the leader's markers, and its `onExit` fires only after the
 * runner has read every byte the command wrote. pid, pause/resume, signals: those of the leader,
 * which is the PTY's session and process-group leader, as the command was before.
 */
export function spawnLed(file: string, args: string[], options: IPtyForkOptions): IPty {
  const env = { ...(options.env ?? {}) } as Record<string, string>;
  // NODE_OPTIONS are the command's, not the leader's: the leader hands them back to the command.
  if (env.NODE_OPTIONS !== undefined) {
    env.AV_LEADER_NODE_OPTIONS = env.NODE_OPTIONS;
    delete env.NODE_OPTIONS;
  }
  const pty = spawn(process.execPath, [SESSION_LEADER_PATH, file, ...args], { ...options, env });
  const listeners = new Set<(data: string) => void>();
  const deliver = (text: string) => {
    if (text) for (const l of listeners) l(text);
  };
  const stream = new LeaderStream(() => {
    try {
      process.kill(pty.pid, READ_ALL_SIGNAL);
    } catch {
      // The leader is already gone (killed with its group).
    }
  });
  const reader = readPty(pty, (data) => deliver(stream.push(data)));
  // Whatever was held as a possible marker start (or half a character) is plain output once the PTY is gone.
  pty.onExit(() => deliver(stream.push(reader.end()) + stream.flush()));
  const onData = (listener: (data: string) => void): IDisposable => {
    listeners.add(listener);
    return { dispose: () => listeners.delete(listener) };
  };
  return {
    get pid() {
      return pty.pid;
    },
    get cols() {
      return pty.cols;
    },
    get rows() {
      return pty.rows;
    },
    get process() {
      return pty.process;
    },
    get handleFlowControl() {
      return pty.handleFlowControl;
    },
    set handleFlowControl(v: boolean) {
      pty.handleFlowControl = v;
    },
    onData,
    onExit: pty.onExit,
    resize: (cols, rows) => pty.resize(cols, rows),
    clear: () => pty.clear(),
    write: (data) => pty.write(data),
    kill: (signal) => pty.kill(signal),
    pause: () => pty.pause(),
    resume: () => pty.resume(),
  };
}

// The session leader of every session PTY (issue 11 item 12): node-pty starts this program, it
// starts the real command as its child, and it exits only after the runner has read everything.
//
// Why: when a PTY's session leader exits, the kernel hangs the terminal up and discards whatever
// the master side has not read yet, so a fast producer that exits at once lost its last lines.
// Here the command is never the session leader. After it exits this program writes an end marker
// (carrying a nonce the command never saw) behind the command's last byte and waits for SIGUSR1
// from the runner, which sends it once it has read the marker — however long flow control keeps
// the PTY paused, there is no timer — then it exits with the command's code or dies of its signal.
//
// Protocol (parsed by leader-stream.ts): first `ESC ] 6973;av-leader;hello;<nonce> BEL` before
// the command exists; then the command's output; then `ESC ] 6973;av-leader;end;<nonce> BEL`.
// Plain JavaScript so it starts without a TypeScript loader.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';

const PREFIX = '\x1b]6973;av-leader;';
/** Exit status of a command that could not be started, as shells report it. */
const NOT_STARTED = 127;
/** How often the leader looks whether the runner that started it is still there once the command ended. */
const PARENT_CHECK_MS = 1000;
/** A signal that does not end this process by default still has to end it: fall back to 128+n. */
const RERAISE_FALLBACK_MS = 500;

const [file, ...args] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: session-leader COMMAND [ARGS...]\n');
  process.exit(2);
}
const parent = process.ppid;
const nonce = randomBytes(16).toString('hex');
/** How the command ended; set once. */
let status = null;
let endWritten = false;
/** The command, once started. */
let child = null;

/** Blocking write of the whole text to the terminal; a full PTY (flow control) simply blocks here. */
function writeAll(text) {
  const buf = Buffer.from(text);
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(1, buf, off);
    } catch (err) {
      // The command may have left the shared terminal description non-blocking.
      if (err.code === 'EAGAIN') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      else throw err;
    }
  }
}

writeAll(`${PREFIX}hello;${nonce}\x07`);

// Keys typed at the terminal signal the whole foreground group; they are the command's to act on.
for (const sig of ['SIGINT', 'SIGQUIT', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU']) process.on(sig, () => {});
// Stop sends SIGTERM and SIGHUP to the leader; they are meant for the command. Once the command
// has ended, the leader finishes its hand-over instead (the runner is still reading).
for (const sig of ['SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (status === null && child && child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(sig);
      } catch {
        // Already gone.
      }
    }
  });
}
// The runner read the end marker: everything is read. A SIGUSR1 before the marker was written
// (a command printing a look-alike cannot know the nonce, but may send signals) changes nothing.
process.on('SIGUSR1', () => {
  if (endWritten) finish();
});

const childEnv = { ...process.env };
// The runner moved the command's NODE_OPTIONS aside so they could not change this program.
if (childEnv.AV_LEADER_NODE_OPTIONS !== undefined) {
  childEnv.NODE_OPTIONS = childEnv.AV_LEADER_NODE_OPTIONS;
  delete childEnv.AV_LEADER_NODE_OPTIONS;
}
child = spawn(file, args, { stdio: 'inherit', env: childEnv });
child.on('error', (err) => {
  try {
    writeAll(`session-leader: cannot start ${file}: ${err.message}\r\n`);
  } catch {
    // The terminal is gone too.
  }
  ended({ code: NOT_STARTED, signal: null });
});
child.on('exit', (code, signal) => ended({ code, signal }));

function ended(s) {
  if (status !== null) return;
  status = s;
  endWritten = true;
  try {
    writeAll(`${PREFIX}end;${nonce}\x07`);
  } catch {
    // No terminal left to hand anything over on (the runner died): nothing to wait for.
    finish();
    return;
  }
  // A runner that died cannot acknowledge; this process must not linger for ever.
  setInterval(() => {
    if (process.ppid !== parent) finish();
  }, PARENT_CHECK_MS);
}

function finish() {
  const { code, signal } = status;
  if (!signal) process.exit(code ?? 1);
  // Die of the same signal so the runner sees what the command saw. A listener added and removed
  // puts the default action back (Node ignores SIGPIPE, and this program caught a few above).
  try {
    process.on(signal, () => {});
  } catch {
    // SIGKILL and SIGSTOP take no listener; their default action is fixed anyway.
  }
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  setTimeout(() => process.exit(128 + (os.constants.signals[signal] ?? 0)), RERAISE_FALLBACK_MS);
}

/**
 * Lengths the wire accepts, in one place: the event schemas use them as `.max()` and senders cut
 * their text to them, so a sender never builds a message the receiver refuses.
 */
export const WIRE_LIMITS = {
  /** A reason, a summary or a detail a person reads (state changes, approvals, alerts, patrol runs). */
  TEXT: 2000,
  /** An error or alert message (may carry a few lines of tool output). */
  MESSAGE: 4000,
  /** A command line as run (test runs, patrols). */
  COMMAND: 4096,
  /** A file path in a repository. */
  PATH: 4096,
  /** A command as asked about or blocked by policy (whole pipelines, heredocs cut short). */
  POLICY_COMMAND: 8000,
  /** A policy rule as shown. */
  RULE: 500,
  /** A name (who decided). */
  NAME: 200,
  /** Files listed in one DIFF_SUMMARY. */
  DIFF_FILES: 5000,
} as const;

/**
 * The runner's binary event frame (protocol/runner-frame.ts): the output bytes one frame may carry.
 * A batch is at most ~256 000 characters (runner/spool/sender.ts), but one TERMINAL_CHUNK of its
 * maximum 1 MiB characters goes alone and takes up to 3 MiB in UTF-8. Below the runner engine's
 * 4 MB message cap (runner-engine.ts), so a bigger frame is answered with an error, not a hang-up.
 */
export const FRAME_LIMITS = {
  DATA_BYTES: 3 * 1024 * 1024,
  /** Events in one frame: the same bound as a JSON batch (RunnerEventBatchSchema). */
  EVENTS: 1000,
} as const;

import { loadConfig } from './config';
import { createStderrLogger } from './log';
import { startRunner, type RunnerHandle } from './main';
import { SandboxUnavailableError } from './sandbox/settings';

/**
 * CLI entry: node --import tsx runner/index.ts --server URL --token TOKEN [--name NAME]
 * [--data-dir DIR] [--capacity N] [--labels a,b] [--repo-access PATTERN,…] [--listen PORT]
 * [--ca FILE] [--cert FILE --key FILE] [--insecure] (config.ts USAGE has the environment fallbacks).
 * Exit codes: 0 after a signal-driven shutdown, 1 start-up failure, 2 bad configuration (including
 * plain http:// to a non-loopback control plane without --insecure), 3 token or client
 * certificate refused by the control plane.
 */
const EXIT_START_FAILED = 1;
const EXIT_BAD_CONFIG = 2;
const EXIT_UNAUTHORIZED = 3;
/** AGENT_RUNNER_SANDBOX=required and no sandbox here (server/attached-runner.ts stops restarting on it). */
const EXIT_SANDBOX_UNAVAILABLE = 4;

const log = createStderrLogger();

const loaded = loadConfig(process.argv.slice(2), process.env);
if (!loaded.ok) {
  if (loaded.help) {
    process.stdout.write(`${loaded.message}\n`);
    process.exit(0);
  }
  process.stderr.write(`[runner] ${loaded.message}\n`);
  process.exit(EXIT_BAD_CONFIG);
}

// A bug in one session's callback must not take every other session's PTY down with the process.
process.on('uncaughtException', (err) => log.error('uncaught exception', err));
process.on('unhandledRejection', (err) => log.error('unhandled rejection', err));

let handle: RunnerHandle | null = null;
let exiting = false;

async function shutdown(code: number, why: string): Promise<void> {
  if (exiting) return;
  exiting = true;
  log.info(`${why}; shutting down`);
  try {
    await handle?.stop();
  } catch (err) {
    log.error('shutdown failed', err);
  }
  process.exit(code);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    // A second signal means "now": the operator will not wait for the grace period.
    if (exiting) process.exit(1);
    void shutdown(0, `received ${signal}`);
  });
}

try {
  handle = await startRunner(loaded.config, {
    log,
    onUnauthorized: () => void shutdown(EXIT_UNAUTHORIZED, 'token refused'),
  });
} catch (err) {
  log.error('could not start', err);
  process.exit(err instanceof SandboxUnavailableError ? EXIT_SANDBOX_UNAVAILABLE : EXIT_START_FAILED);
}

/** How often an attached runner checks that the control plane that started it is still there. */
const PARENT_CHECK_MS = 1_000;

// An attached runner (started by `npm start`) ends with its control plane: a new control plane
// starts its own runner on the same data folder, and two must never share it.
const parentPid = Number(process.env.AGENT_RUNNER_PARENT_PID ?? 0);
if (parentPid > 0) {
  setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch (err) {
      // EPERM: it is there, but runs as another user (a root `npm start` runs its runner unprivileged).
      if ((err as NodeJS.ErrnoException).code === 'EPERM') return;
      void shutdown(0, `the control plane (pid ${parentPid}) is gone`);
    }
  }, PARENT_CHECK_MS).unref();
}

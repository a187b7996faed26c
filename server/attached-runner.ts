import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { PROJECT_ROOT } from './env';

/** Restart a crashed attached runner after this long (doubling up to the max) so a crash loop stays calm. */
const RESTART_DELAY_MS = 500;
const RESTART_DELAY_MAX_MS = 10_000;

/**
 * The attached runner is a child process, not an import: it dials the control plane like any
 * remote runner would. Its token travels in the environment (not argv, which `ps` shows), and it
 * gets only the variables it needs, never the server's database URL.
 */
export function startAttachedRunner(opts: { serverUrl: string; token: string; dataDir: string }) {
  let child: ChildProcess | null = null;
  let stopped = false;
  let delay = RESTART_DELAY_MS;

  const launch = () => {
    // Runner settings given to `npm start` (AGENT_RUNNER_CAPACITY, AGENT_RUNNER_CLAUDE_BIN, …) pass
    // through; nothing else of the server's environment does.
    const runnerSettings = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => k.startsWith('AGENT_RUNNER_') && k !== 'AGENT_RUNNER_TOKEN'),
    );
    const env: NodeJS.ProcessEnv = {
      ...runnerSettings,
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LANG: process.env.LANG ?? 'C.UTF-8',
      NODE_ENV: process.env.NODE_ENV,
      // The example blueprints ship with the repository, so a new village has a workshop at once.
      AGENT_RUNNER_BLUEPRINTS_DIR: process.env.AGENT_RUNNER_BLUEPRINTS_DIR || resolve(PROJECT_ROOT, 'runner/blueprints/examples'),
      AGENT_RUNNER_TOKEN: opts.token,
      AGENT_RUNNER_PARENT_PID: String(process.pid),
    };
    const startedAt = Date.now();
    child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(PROJECT_ROOT, 'runner/index.ts'), '--server', opts.serverUrl, '--name', 'attached', '--data-dir', opts.dataDir],
      { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    child.on('exit', (code, signal) => {
      child = null;
      if (stopped) return;
      if (Date.now() - startedAt > 30_000) delay = RESTART_DELAY_MS;
      console.error(`[server] attached runner exited (${signal ?? code}); restarting in ${delay} ms`);
      setTimeout(launch, delay);
      delay = Math.min(delay * 2, RESTART_DELAY_MAX_MS);
    });
  };
  launch();

  return {
    get pid() {
      return child?.pid ?? null;
    },
    async stop(): Promise<void> {
      stopped = true;
      const c = child;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((res) => {
        const t = setTimeout(() => c.kill('SIGKILL'), 8_000);
        c.once('exit', () => {
          clearTimeout(t);
          res();
        });
        c.kill('SIGTERM');
      });
    },
  };
}

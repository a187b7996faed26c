import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from './env';

/** Restart a crashed attached runner after this long (doubling up to the max) so a crash loop stays calm. */
const RESTART_DELAY_MS = 500;
const RESTART_DELAY_MAX_MS = 10_000;

/** The OS user a root `npm start` runs its attached runner (and so every session) as. */
export const DEFAULT_RUNNER_USER = 'agent-village';
/** runner/index.ts exits with this when AGENT_RUNNER_SANDBOX=required and the sandbox is unavailable. */
export const RUNNER_EXIT_SANDBOX_UNAVAILABLE = 4;

export interface RunnerIdentity {
  /** Unset: the runner runs as the server's own OS user. */
  uid?: number;
  gid?: number;
  home: string;
  /** The runner's data folder (spool, clones, worktrees, session homes). */
  dataDir: string;
  /** What the runner does without a sandbox: `required` refuses to start (runner/sandbox/settings.ts). */
  sandbox: 'auto' | 'required';
  notes: string[];
}

export class AttachedRunnerRefused extends Error {}

function lookupUser(name: string): { uid: number; gid: number; home: string } | null {
  try {
    const line = execFileSync('getent', ['passwd', name], { encoding: 'utf8' }).trim();
    const f = line.split(':');
    return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] };
  } catch {
    return null;
  }
}

/**
 * Who the attached runner runs as, so that no session can read the control plane's data folder
 * (issue 11; README "Threat model"):
 * - as root: as an unprivileged user (AGENT_VILLAGE_RUNNER_USER, default `agent-village`, created
 *   as a system user when missing), with its data in that user's home; DATA_DIR is made
 *   traversable only (0711) and the database and key files 0600, so the runner can clone the
 *   demo repository inside it but read nothing else. AGENT_VILLAGE_RUNNER_AS_ROOT=1 keeps root.
 * - as a normal user: the runner is the server's user, so only the sandbox hides DATA_DIR; the
 *   runner is told to refuse to start without one, unless AGENT_VILLAGE_ALLOW_EXPOSED_DATA=1.
 * Throws AttachedRunnerRefused with a message a person can act on.
 */
export function attachedRunnerIdentity(opts: { dataDir: string; runnerDataDir: string; env?: Record<string, string | undefined>; isRoot?: boolean }): RunnerIdentity {
  const env = opts.env ?? process.env;
  const isRoot = opts.isRoot ?? process.getuid?.() === 0;
  const exposedOk = env.AGENT_VILLAGE_ALLOW_EXPOSED_DATA === '1';
  if (!isRoot) {
    return {
      home: env.HOME ?? '/tmp',
      dataDir: opts.runnerDataDir,
      sandbox: exposedOk ? 'auto' : 'required',
      notes: exposedOk ? ['AGENT_VILLAGE_ALLOW_EXPOSED_DATA=1: sessions may run without a sandbox and then can read the data folder'] : [],
    };
  }
  if (env.AGENT_VILLAGE_RUNNER_AS_ROOT === '1') {
    return { home: env.HOME ?? '/root', dataDir: opts.runnerDataDir, sandbox: exposedOk ? 'auto' : 'required', notes: ['AGENT_VILLAGE_RUNNER_AS_ROOT=1: the attached runner runs as root'] };
  }
  const name = env.AGENT_VILLAGE_RUNNER_USER || DEFAULT_RUNNER_USER;
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(name)) throw new AttachedRunnerRefused(`AGENT_VILLAGE_RUNNER_USER "${name}" is not a valid user name`);
  const notes: string[] = [];
  let user = lookupUser(name);
  if (!user) {
    try {
      execFileSync('useradd', ['--system', '--create-home', '--home-dir', `/var/lib/${name}`, '--shell', '/usr/sbin/nologin', name], { stdio: 'pipe' });
      notes.push(`created the system user ${name}`);
    } catch (err) {
      throw new AttachedRunnerRefused(
        `the server runs as root and will not run its attached runner (and every session) as root, but could not create the user "${name}" ` +
          `(${err instanceof Error ? err.message.split('\n')[0] : String(err)}). Create it (useradd --system --create-home ${name}), set AGENT_VILLAGE_RUNNER_USER to an existing unprivileged user, ` +
          'or run `npm start` as a normal user.',
      );
    }
    user = lookupUser(name);
    if (!user) throw new AttachedRunnerRefused(`created the user "${name}" but cannot look it up`);
  }
  if (user.uid === 0) throw new AttachedRunnerRefused(`AGENT_VILLAGE_RUNNER_USER "${name}" is root; name an unprivileged user`);
  // The runner must read the project (its own code) and nothing of the control plane.
  const projectMode = fs.statSync(PROJECT_ROOT).mode;
  if ((projectMode & 0o005) !== 0o005) throw new AttachedRunnerRefused(`${PROJECT_ROOT} is not readable by other users, so "${name}" cannot run the runner from it (chmod o+rx)`);
  // Every folder above it must let others through too (a checkout under /root, mode 0700, does not).
  for (let dir = dirname(PROJECT_ROOT); ; dir = dirname(dir)) {
    if ((fs.statSync(dir).mode & 0o001) === 0) throw new AttachedRunnerRefused(`${dir} does not let other users through, so "${name}" cannot reach ${PROJECT_ROOT} (chmod o+x ${dir}, or put the checkout elsewhere)`);
    if (dirname(dir) === dir) break;
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  fs.chmodSync(opts.dataDir, 0o711);
  for (const f of fs.readdirSync(opts.dataDir)) {
    // Database, its journals, the key, and the old runner folder: the owner's only.
    if (/^village\.db/.test(f) || f === 'secret.key') fs.chmodSync(join(opts.dataDir, f), 0o600);
  }
  // The runner's folder stays inside DATA_DIR (one per control plane) but belongs to the runner user alone.
  const dataDir = opts.runnerDataDir;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, dataDir]);
  fs.chmodSync(dataDir, 0o700);
  // Repositories registered by admins belong to other users; git refuses those unless told (only
  // a global config counts). Sessions have their own HOME, so this never reaches them.
  const gitconfig = join(user.home, '.gitconfig');
  if (!fs.existsSync(gitconfig)) {
    fs.writeFileSync(gitconfig, '# Written by Agent Village: the runner clones repositories owned by other users.\n[safe]\n\tdirectory = *\n', { mode: 0o644 });
    fs.chownSync(gitconfig, user.uid, user.gid);
  }
  return { uid: user.uid, gid: user.gid, home: user.home, dataDir, sandbox: 'auto', notes };
}

/**
 * The attached runner is a child process, not an import: it dials the control plane like any
 * remote runner would. Its token travels in the environment (not argv, which `ps` shows), and it
 * gets only the variables it needs, never the server's database URL.
 */
export function startAttachedRunner(opts: { serverUrl: string; token: string; dataDir: string; controlPlaneDataDir?: string }) {
  let identity: RunnerIdentity;
  try {
    identity = attachedRunnerIdentity({ dataDir: opts.controlPlaneDataDir ?? resolve(opts.dataDir, '..'), runnerDataDir: opts.dataDir });
  } catch (err) {
    if (!(err instanceof AttachedRunnerRefused)) throw err;
    // The control plane still serves; it just has no runner beside it.
    console.error(`[server] not starting the attached runner: ${err.message}`);
    return { pid: null, stop: async () => {} };
  }
  for (const n of identity.notes) console.warn(`[server] attached runner: ${n}`);
  if (identity.uid !== undefined) console.log(`[server] attached runner runs as uid ${identity.uid}, data in ${identity.dataDir}`);
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
      HOME: identity.home,
      LANG: process.env.LANG ?? 'C.UTF-8',
      NODE_ENV: process.env.NODE_ENV,
      // The example blueprints ship with the repository, so a new village has a workshop at once.
      AGENT_RUNNER_BLUEPRINTS_DIR: process.env.AGENT_RUNNER_BLUEPRINTS_DIR || resolve(PROJECT_ROOT, 'runner/blueprints/examples'),
      AGENT_RUNNER_TOKEN: opts.token,
      AGENT_RUNNER_PARENT_PID: String(process.pid),
      // Sessions never see the control plane's folder (the runner hides it in their sandbox).
      AGENT_RUNNER_PRIVATE_PATHS: [opts.controlPlaneDataDir ?? resolve(opts.dataDir, '..'), process.env.AGENT_RUNNER_PRIVATE_PATHS].filter(Boolean).join(','),
      AGENT_RUNNER_SANDBOX: process.env.AGENT_RUNNER_SANDBOX === 'off' && identity.sandbox === 'auto' ? 'off' : identity.sandbox,
    };
    const startedAt = Date.now();
    child = spawn(
      process.execPath,
      [
        // Opt-in profiling (bench/terminal-live.ts BENCH_CPU_PROF): the runner writes a .cpuprofile on exit.
        ...(process.env.AGENT_VILLAGE_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.AGENT_VILLAGE_CPU_PROF_DIR}`] : []),
        '--import', 'tsx', resolve(PROJECT_ROOT, 'runner/index.ts'), '--server', opts.serverUrl, '--name', 'attached', '--data-dir', identity.dataDir,
      ],
      { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'inherit', 'inherit'], ...(identity.uid !== undefined ? { uid: identity.uid, gid: identity.gid } : {}) },
    );
    child.on('exit', (code, signal) => {
      child = null;
      if (stopped) return;
      if (code === RUNNER_EXIT_SANDBOX_UNAVAILABLE) {
        console.error(
          '[server] the attached runner refused to start: no sandbox on this machine, so its sessions could read this server\'s data folder. ' +
            'Enable user namespaces / install bubblewrap, start `npm start` as root (the runner then runs as an unprivileged user), ' +
            'or set AGENT_VILLAGE_ALLOW_EXPOSED_DATA=1 to accept that (README, "Threat model"). Not restarting it.',
        );
        return;
      }
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

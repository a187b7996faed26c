import { execFile } from 'node:child_process';
import { RunnerError } from '../errors';

/** Clones and fetches of big repositories over slow links can take a while; hung ones must not block forever. */
export const GIT_NETWORK_TIMEOUT_MS = 15 * 60_000;
/** Local plumbing (worktree add, ls-tree) finishes in seconds even on large repositories. */
export const GIT_LOCAL_TIMEOUT_MS = 2 * 60_000;
/** `ls-tree -r` of a monorepo is tens of MB of names. */
const GIT_MAX_BUFFER = 512 * 1024 * 1024;

/** Variables that would point git at some other repository than the one we name. */
const REPO_REDIRECTING_VARS = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_CEILING_DIRECTORIES'];

/**
 * The runner's own git keeps the runner's environment (credentials, SSH agent, proxies are the
 * operator's business) but never prompts: there is no terminal to answer on.
 */
export function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_ASKPASS: 'true', SSH_ASKPASS: 'true' };
  for (const v of REPO_REDIRECTING_VARS) delete env[v];
  // Hooks and credential helpers run with this environment; the runner's own secrets stay out.
  for (const v of Object.keys(env)) if (v.startsWith('AGENT_RUNNER_')) delete env[v];
  return env;
}

/** Git said no; its first stderr line is the message (e.g. "git clone failed: fatal: …"). */
export class GitError extends RunnerError {
  constructor(
    readonly command: string,
    readonly stderr: string,
    message: string,
  ) {
    super('RUNNER_ERROR', message);
    this.name = 'GitError';
  }
}

export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? ''
  );
}

export interface GitOptions {
  cwd?: string;
  timeoutMs?: number;
  /** Short name used in the error message: "git <what> failed: ...". */
  what?: string;
}

/** Runs git with an argument vector (never a shell string) and returns stdout. */
export function git(args: string[], opts: GitOptions = {}): Promise<string> {
  const what = opts.what ?? args[0] ?? 'git';
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd: opts.cwd, env: gitEnv(), timeout: opts.timeoutMs ?? GIT_LOCAL_TIMEOUT_MS, maxBuffer: GIT_MAX_BUFFER, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const e = err as NodeJS.ErrnoException & { killed?: boolean };
        let reason = firstLine(stderr);
        if (e.code === 'ENOENT') reason = `could not run git (${opts.cwd ? `is git installed, does ${opts.cwd} exist?` : 'is git installed?'})`;
        else if (e.killed) reason = 'timed out';
        else if (!reason) reason = e.message;
        reject(new GitError(`git ${args.join(' ')}`, stderr, `git ${what} failed: ${reason}`));
      },
    );
  });
}

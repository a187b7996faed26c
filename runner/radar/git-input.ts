import { spawn } from 'node:child_process';
import { GIT_LOCAL_TIMEOUT_MS, gitEnv } from '../workspace/git';

export interface GitInputRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * git with text on stdin (a patch for `apply`, object names for `cat-file --batch-check`), its
 * exit code and stderr returned as they are: the callers turn git's refusal into words.
 */
export function gitWithInput(args: string[], cwd: string, input: string, extraEnv: Record<string, string> = {}): Promise<GitInputRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: { ...gitEnv(), ...extraEnv }, stdio: ['pipe', 'pipe', 'pipe'], timeout: GIT_LOCAL_TIMEOUT_MS });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    // git may exit before reading everything (a refused patch): EPIPE is its answer, not ours.
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(input);
  });
}

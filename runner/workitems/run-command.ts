import { spawn } from 'node:child_process';

/** Output kept from a command (the tail: failures print last). */
export const MAX_COMMAND_OUTPUT_CHARS = 200_000;
/** After SIGTERM at a deadline, the process group gets this long before SIGKILL. */
const KILL_GRACE_MS = 2_000;

export interface CommandOutcome {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/**
 * Runs argv in its own process group (so a deadline ends everything it started) with an explicit
 * environment; stdout and stderr interleaved, tail-capped. Never rejects.
 */
export function runCommand(argv: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; deadline: number }): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.length > MAX_COMMAND_OUTPUT_CHARS * 2) output = output.slice(-MAX_COMMAND_OUTPUT_CHARS);
    };
    const child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        killGroup('SIGTERM');
        setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
      },
      Math.max(0, opts.deadline - Date.now()),
    );
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, output: `${output}${err.message}\n`.slice(-MAX_COMMAND_OUTPUT_CHARS), timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      // Whatever the step left running in its group ends with it.
      killGroup('SIGKILL');
      resolve({ code, output: output.slice(-MAX_COMMAND_OUTPUT_CHARS), timedOut });
    });
  });
}

/** "12 passed", "3 failed" (vitest, jest, playwright) or TAP's "# pass 12" / "# fail 3"; null when the output says neither. */
export function testCounts(output: string): { passed: number; failed: number } | null {
  const num = (re: RegExp) => {
    const m = [...output.matchAll(re)].at(-1);
    return m ? Number(m[1]) : null;
  };
  const passed = num(/(\d+) passed\b/g) ?? num(/^# pass (\d+)/gm) ?? num(/^ℹ pass (\d+)/gm);
  const failed = num(/(\d+) failed\b/g) ?? num(/^# fail (\d+)/gm) ?? num(/^ℹ fail (\d+)/gm);
  if (passed === null && failed === null) return null;
  return { passed: passed ?? 0, failed: failed ?? 0 };
}

import os from 'node:os';
import { DETERMINISTIC_LIMITS, type Invocation, type ProceduralResult } from '../../../protocol';
import { buildCliArgs, CommandSyntaxError } from './argv';
import { runCommand, type CommandOutcome } from './run-command';

/** Exit codes of the executor itself, beside the command's own (which it passes on). */
export const EXIT = {
  /** The invocation on stdin was not valid. */
  BAD_INVOCATION: 2,
  /** The result could not be handed to the runner's gateway. */
  GATEWAY_FAILED: 3,
  /** As timeout(1) does: the command ran out of time. */
  TIMED_OUT: 124,
  /** As a shell does: the command could not be found or started. */
  NOT_STARTED: 127,
} as const;

/** The gateway is local; a few quick retries cover a busy runner, not a dead one. */
const POST_ATTEMPTS = 5;
const POST_RETRY_MS = 300;
const POST_TIMEOUT_MS = 10_000;

/** stdout as the spec's result_data: parsed JSON when it is JSON, else null (and never for cut-off output). */
export function parseResultData(stdout: string, truncated: boolean): unknown {
  if (truncated || stdout.trim() === '') return null;
  try {
    return JSON.parse(stdout) as unknown;
  } catch {
    return null;
  }
}

/** The `result` event for an invocation and what its command did. */
export function resultEvent(inv: Invocation, outcome: CommandOutcome, now = new Date()): ProceduralResult {
  return {
    event_type: 'result',
    session_id: inv.session_id,
    timestamp: now.toISOString(),
    result_type: 'procedural',
    result_text: outcome.stdout,
    result_data: parseResultData(outcome.stdout, outcome.stdoutTruncated),
    exit_code: outcome.exitCode,
    stderr: outcome.stderr,
    stdout_truncated: outcome.stdoutTruncated,
    timed_out: outcome.timedOut,
    signal: outcome.signal,
    spawn_error: outcome.spawnError,
    duration_ms: outcome.durationMs,
  };
}

/** The executor's own exit code: the command's, or what a shell would say for a signal / timeout / no program. */
export function exitCodeFor(result: ProceduralResult): number {
  if (result.spawn_error) return EXIT.NOT_STARTED;
  if (result.timed_out) return EXIT.TIMED_OUT;
  if (result.exit_code !== null) return result.exit_code;
  const signo = result.signal ? os.constants.signals[result.signal as NodeJS.Signals] : undefined;
  return signo ? 128 + signo : 1;
}

/** Runs the invocation's command (argv from build_cli_args, parameters also as JSON on stdin). */
export async function execute(inv: Invocation, env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): Promise<ProceduralResult> {
  let argv: string[];
  try {
    argv = buildCliArgs(inv.command, inv.parameters);
  } catch (err) {
    if (!(err instanceof CommandSyntaxError)) throw err;
    return resultEvent(inv, {
      stdout: '',
      stderr: '',
      stdoutTruncated: false,
      exitCode: null,
      signal: null,
      timedOut: false,
      spawnError: err.message,
      durationMs: 0,
    });
  }
  const outcome = await runCommand({
    argv,
    cwd: inv.project_dir,
    env,
    stdin: JSON.stringify(inv.parameters),
    timeoutMs: (inv.timeout_seconds ?? DETERMINISTIC_LIMITS.DEFAULT_TIMEOUT_SECONDS) * 1000,
    signal,
  });
  return resultEvent(inv, outcome);
}

/** Hands the result event to the runner's gateway (its local hook endpoint, bearer = the run's token). */
export async function sendResult(inv: Invocation, result: ProceduralResult): Promise<void> {
  let last: unknown;
  for (let attempt = 1; attempt <= POST_ATTEMPTS; attempt++) {
    try {
      const res = await fetch(inv.gateway_url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(inv.gateway_token ? { authorization: `Bearer ${inv.gateway_token}` } : {}),
        },
        body: JSON.stringify({ provider: 'deterministic', event: 'result', payload: result }),
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      });
      if (res.ok) return;
      const text = await res.text().catch(() => '');
      // 4xx will not get better with a retry.
      if (res.status >= 400 && res.status < 500) throw new Error(`gateway answered ${res.status}: ${text.slice(0, 300)}`);
      last = new Error(`gateway answered ${res.status}: ${text.slice(0, 300)}`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('gateway answered 4')) throw err;
      last = err;
    }
    await new Promise((r) => setTimeout(r, POST_RETRY_MS * attempt));
  }
  throw last instanceof Error ? last : new Error(String(last));
}

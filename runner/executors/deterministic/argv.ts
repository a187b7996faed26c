import { parse } from 'shell-quote';

/**
 * argv for a deterministic agent, as the spec's build_cli_args makes it: the blueprint's command
 * split into words, then each parameter — `true` booleans as a bare `--key` (false ones left out),
 * lists comma-joined after `--key`, anything else as `--key value`. Every value stays one argv
 * element and no shell ever runs the result, so a parameter cannot inject a command.
 */

export class CommandSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandSyntaxError';
  }
}

/**
 * Splits a blueprint's command with POSIX shell-words rules (quotes and backslashes), through
 * shell-quote. Since nothing runs it through a shell, what only a shell could do is refused with a
 * reason instead of silently meaning something else: operators (| ; && > …), unquoted globs,
 * comments. `$NAME` stays literal text.
 */
export function splitCommand(command: string): string[] {
  // A function for env keeps "$HOME" as written (shell-quote would expand it to '' otherwise).
  const words = parse(command, (name: string) => `$${name}`);
  const out: string[] = [];
  for (const w of words) {
    if (typeof w === 'string') {
      out.push(w);
      continue;
    }
    if ('comment' in w) throw new CommandSyntaxError('the command has a "#" comment; quote the "#" if it is meant literally');
    if (w.op === 'glob') {
      throw new CommandSyntaxError(`the command has an unquoted glob (${w.pattern}); no shell expands it — quote it or list the files`);
    }
    throw new CommandSyntaxError(`the command uses the shell operator "${w.op}"; no shell runs blueprint commands — put the pipeline in a script and run that`);
  }
  if (out.length === 0 || out[0] === '') throw new CommandSyntaxError('the command has no program to run');
  return out;
}

/** One parameter value as text: strings as they are, numbers and booleans as JSON spells them, objects as JSON. */
function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** build_cli_args(command, parameters) of the spec; `null`/`undefined` values are left out. */
export function buildCliArgs(command: string, parameters: Record<string, unknown>): string[] {
  const args = splitCommand(command);
  for (const [key, value] of Object.entries(parameters)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'boolean') {
      if (value) args.push(`--${key}`);
    } else if (Array.isArray(value)) {
      args.push(`--${key}`, value.map(scalarText).join(','));
    } else {
      args.push(`--${key}`, scalarText(value));
    }
  }
  return args;
}

import fs from 'node:fs';
import path from 'node:path';
import { DETERMINISTIC_LIMITS, type DeliverRunResultCommand, type RunnerEventBody } from '../../protocol';
import { inboxDir } from '../pty/clean-env';

/**
 * The run inbox: a deterministic run started with a session as its parent finished. The whole
 * result goes to `$AGENT_VILLAGE_INBOX/<run_id>.json` (the agent reads it like any file), a
 * RUN_RESULT event into the session's stream, and a notice for the agent's next hook call.
 */

/** Writes the result atomically (tmp + rename) into the session's inbox; returns its path. */
export async function writeRunResult(home: string, cmd: DeliverRunResultCommand): Promise<string> {
  const dir = inboxDir(home);
  const file = path.join(dir, `${cmd.run_id}.json`);
  const body = {
    run_id: cmd.run_id,
    agent_name: cmd.agent_name,
    status: cmd.status,
    result_type: cmd.result_type,
    exit_code: cmd.exit_code,
    error: cmd.error,
    result_data: cmd.result_data,
    result_text: cmd.result_text,
  };
  await fs.promises.mkdir(dir, { recursive: true });
  await fs.promises.writeFile(`${file}.tmp`, JSON.stringify(body, null, 2) + '\n');
  await fs.promises.rename(`${file}.tmp`, file);
  return file;
}

/** RUN_RESULT for the session's stream; a text over the callback limit goes without its data. */
export function runResultEvent(cmd: DeliverRunResultCommand, inboxPath: string | null): RunnerEventBody {
  const text = cmd.result_text.length > DETERMINISTIC_LIMITS.MAX_CALLBACK_TEXT ? cmd.result_text.slice(0, DETERMINISTIC_LIMITS.MAX_CALLBACK_TEXT) : cmd.result_text;
  return {
    type: 'RUN_RESULT',
    run_id: cmd.run_id,
    agent_name: cmd.agent_name,
    status: cmd.status,
    result_type: 'procedural',
    result_text: text,
    result_data: text.length === cmd.result_text.length ? cmd.result_data : null,
    exit_code: cmd.exit_code,
    error: cmd.error,
    inbox_path: inboxPath,
  };
}

/** What the agent is told at its next hook call. */
export function runResultNotice(cmd: DeliverRunResultCommand, inboxPath: string | null): string {
  const summary = cmd.status === 'completed' ? `completed (exit code ${cmd.exit_code ?? '?'})` : `failed: ${cmd.error ?? 'unknown error'}`;
  return (
    `Agent Village: the deterministic agent "${cmd.agent_name}" (run ${cmd.run_id}) that was started for this session ${summary}.` +
    (inboxPath ? ` Its full result (JSON with result_data, result_text, exit_code) is in ${inboxPath}.` : '') +
    (cmd.result_text ? ` stdout begins: ${cmd.result_text.slice(0, 1000)}` : '')
  );
}

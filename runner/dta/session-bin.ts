import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bashQuote } from '../pty/clean-env';

/** The package bin, run by the runner's own node (a session's PATH may have another or none). */
export const AV_DTA_BIN = fileURLToPath(new URL('./av-dta.mjs', import.meta.url));

/** The session's hook channel config (url, token, socket): av-dta sends its runs there. */
export const HOOK_CONFIG_ENV = 'AV_DTA_HOOK_CONFIG';

/**
 * Puts `av-dta` into the session's shim folder (already first on its PATH), so an agent requests
 * deterministic edits instead of making them: one file, no PATH entry of its own. With the guard's
 * config, a run goes through the hook channel: the runner runs it and streams its events.
 */
export async function writeAvDtaShim(binDir: string, hookConfigPath?: string): Promise<string> {
  const file = path.join(binDir, 'av-dta');
  const env = hookConfigPath ? `${HOOK_CONFIG_ENV}=${bashQuote(hookConfigPath)} ` : '';
  const script = ['#!/bin/sh', '# Agent Village deterministic tool adapters (generated for this session; removed with it).', `${env}exec ${[process.execPath, AV_DTA_BIN].map(bashQuote).join(' ')} "$@"`, ''].join('\n');
  await fs.promises.writeFile(file, script, { mode: 0o755 });
  return file;
}

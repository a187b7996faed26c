import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bashQuote } from '../pty/clean-env';

/** The package bin, run by the runner's own node (a session's PATH may have another or none). */
export const AV_DTA_BIN = fileURLToPath(new URL('./av-dta.mjs', import.meta.url));

/**
 * Puts `av-dta` into the session's shim folder (already first on its PATH), so an agent requests
 * deterministic edits instead of making them: one file, no PATH entry of its own.
 */
export async function writeAvDtaShim(binDir: string): Promise<string> {
  const file = path.join(binDir, 'av-dta');
  const script = ['#!/bin/sh', '# Agent Village deterministic tool adapters (generated for this session; removed with it).', `exec ${[process.execPath, AV_DTA_BIN].map(bashQuote).join(' ')} "$@"`, ''].join('\n');
  await fs.promises.writeFile(file, script, { mode: 0o755 });
  return file;
}

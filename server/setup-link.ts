import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The setup token's copy in DATA_DIR (mode 0600: only the server's OS user reads it). */
export const SETUP_TOKEN_FILE = 'setup-token';

/**
 * Publish the first-run link: printed in the server's log and kept in `DATA_DIR/setup-token`
 * (for scripts and tests that start the server), until the first admin exists. `print` writes
 * past the log redactor: this one token is meant to be read in the log.
 */
export function publishSetupLink(opts: { dataDir: string; publicUrl: string; token: string; print: (line: string) => void }) {
  const file = join(opts.dataDir, SETUP_TOKEN_FILE);
  mkdirSync(opts.dataDir, { recursive: true });
  writeFileSync(file, `${opts.token}\n`, { mode: 0o600 });
  opts.print(`[server] first run: open ${opts.publicUrl}/setup?token=${opts.token} to create the admin account\n`);
  return () => rmSync(file, { force: true });
}

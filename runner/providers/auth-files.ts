import fs from 'node:fs';
import path from 'node:path';
import type { ProviderId } from '../../protocol';

/**
 * The runner user's own provider sign-in, shared with sessions only when the runner was started
 * with `--provider-auth claude,codex,…`: one file per provider, copied read-only (0400) into the
 * session's throwaway home, never the rest of the runner user's home. Paths as the CLIs keep them
 * on Linux (read from the installed packages; README, "Using real agents").
 */
export const AUTH_FILES: Record<'claude' | 'codex' | 'gemini', string> = {
  claude: '.claude/.credentials.json',
  codex: '.codex/auth.json',
  gemini: '.gemini/oauth_creds.json',
};

export type AuthProvider = keyof typeof AUTH_FILES;
export const AUTH_PROVIDERS = Object.keys(AUTH_FILES) as AuthProvider[];

export function isAuthProvider(id: ProviderId | string): id is AuthProvider {
  return Object.hasOwn(AUTH_FILES, id);
}

/** Shorter strings are not credentials (flags, timestamps, "Bearer"); masking them would garble output. */
const MIN_SECRET_LENGTH = 12;
/** Keys whose string values are credentials in these files (access/refresh/id tokens, API keys). */
const SECRET_KEY = /token|key|secret|password|credential/i;

/** Every credential-looking string value in an auth file's JSON (any depth). */
export function authFileSecrets(text: string): string[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // Not JSON: the whole file is the credential.
    const t = text.trim();
    return t.length >= MIN_SECRET_LENGTH ? [t] : [];
  }
  const out = new Set<string>();
  const walk = (v: unknown, key: string): void => {
    if (typeof v === 'string') {
      if (SECRET_KEY.test(key) && v.length >= MIN_SECRET_LENGTH) out.add(v);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, key);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, k);
    }
  };
  walk(data, '');
  return [...out];
}

export class SharedAuthFile {
  constructor(
    readonly provider: AuthProvider,
    /** The runner user's home, where the CLI keeps its sign-in. */
    private readonly runnerHome: string,
  ) {}

  get source(): string {
    return path.join(this.runnerHome, AUTH_FILES[this.provider]);
  }

  /** The values to mask; read fresh each time, the CLI may have refreshed its tokens. */
  secrets(): string[] {
    try {
      return authFileSecrets(fs.readFileSync(this.source, 'utf8'));
    } catch {
      return [];
    }
  }

  /** Copies the file to `dest` read-only; false when the runner user has not signed in. */
  async copyTo(dest: string): Promise<boolean> {
    let content: Buffer;
    try {
      content = await fs.promises.readFile(this.source);
    } catch {
      return false;
    }
    await fs.promises.mkdir(path.dirname(dest), { recursive: true, mode: 0o700 });
    await fs.promises.rm(dest, { force: true });
    await fs.promises.writeFile(dest, content, { mode: 0o400 });
    return true;
  }
}

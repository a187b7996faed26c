import { randomBytes } from 'node:crypto';

/** Prefixed random ids (`sess_…`, `repo_…`): readable in logs, unguessable, URL-safe. */
export function newId(prefix: 'org' | 'user' | 'auth' | 'rtok' | 'runner' | 'repo' | 'sess' | 'inv' | 'aud' | 'secret' | 'invc' | 'plan' | 'patrol' | 'prun' | 'alert' | 'run' | 'bp'): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

import { normalize } from 'pathe';
import gitUrlParse from 'git-url-parse';

/**
 * The one reader of repository sources (server and runner alike): git URLs in every spelling git
 * accepts (`https://`, `ssh://`, `git://`, scp-like `git@host:owner/repo`) are read by
 * `git-url-parse`; absolute paths and `file://` URLs are local folders.
 */
export type ParsedSource =
  | {
      kind: 'remote';
      /** Lower-cased host name without port or credentials; IPv6 literals keep their brackets. */
      host: string;
      port: number | null;
      protocol: string;
      /** Every path segment but the last ("group/sub" for GitLab subgroups), as written. */
      owner: string;
      /** The last path segment without `.git`. */
      name: string;
    }
  | { kind: 'local'; path: string };

const stripGit = (s: string) => s.replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');

/** A local path or file:// URL → its normalised path; a git URL → host, owner and name; anything else → null. */
export function parseSource(source: string): ParsedSource | null {
  const s = source.trim();
  if (s.startsWith('file://')) return { kind: 'local', path: normalize(stripGit(s.slice('file://'.length))) || '/' };
  if (s.startsWith('/')) return { kind: 'local', path: normalize(stripGit(s)) || '/' };
  let parsed: ReturnType<typeof gitUrlParse>;
  try {
    parsed = gitUrlParse(s);
  } catch {
    return null;
  }
  if (!parsed.resource) return null;
  const parts = stripGit(parsed.pathname).split('/').filter(Boolean);
  return {
    kind: 'remote',
    host: parsed.resource.toLowerCase(),
    port: parsed.port ? Number(parsed.port) : null,
    protocol: parsed.protocol,
    owner: parts.slice(0, -1).join('/'),
    name: parts.at(-1) ?? parsed.resource,
  };
}

/**
 * One spelling per repository location: `https://github.com/Acme/Repo.git`, `git@github.com:Acme/Repo`,
 * `ssh://git@github.com/acme/repo` and `git://github.com/acme/repo` are all `github.com/acme/repo`
 * (hosts and paths compared case-insensitively, as the big forges do); a local path (or file://
 * URL) is the normalised path without a trailing slash or `.git`, case kept.
 */
export function canonicalSource(source: string): string {
  const p = parseSource(source);
  if (!p) return source.trim();
  if (p.kind === 'local') return p.path;
  return [p.host, p.owner, p.name].filter(Boolean).join('/').toLowerCase();
}

import { normalize } from 'pathe';
import picomatch from 'picomatch';
import { canonicalSource } from './git-url';

/**
 * Repository-access globs (a runner's `--repo-access`, a plan's repository allowlist), one matcher
 * for the runner and the server so placement never picks a runner that then refuses. picomatch
 * semantics: `*` within one path segment, `**` across segments, `?` one character, `{a,b}` and
 * `[abc]` as in a shell. An empty list, or a `*` pattern, allows every source.
 *
 * A source is tested as written (local paths normalised, so `/srv/code/../etc` is not under
 * `/srv/code/**`) and in its canonical spelling (`github.com/acme/repo`, see git-url.ts), so a
 * pattern may name either. A URL with a `..` segment could mean another repository than the
 * pattern names: it matches nothing.
 */
export function createRepoAccess(patterns: readonly string[]): (source: string) => boolean {
  if (patterns.length === 0 || patterns.includes('*')) return () => true;
  const isMatch = picomatch([...patterns], { dot: true });
  return (source) => {
    const candidates = sourceCandidates(source);
    return candidates !== null && candidates.some((c) => isMatch(c));
  };
}

/** Whether `patterns` let a source through (the same rule as createRepoAccess, for one-off checks). */
export function repoAccessAllows(patterns: readonly string[], source: string): boolean {
  return createRepoAccess(patterns)(source);
}

function sourceCandidates(source: string): string[] | null {
  const s = source.trim();
  if (!s) return null;
  if (s.startsWith('/')) return unique([normalize(s), canonicalSource(s)]);
  if (/(^|[/:])\.\.(\/|$)/.test(s)) return null;
  return unique([s, canonicalSource(s)]);
}

const unique = (xs: string[]) => [...new Set(xs)];

/**
 * A comma-separated pattern list (`--repo-access`, AGENT_RUNNER_REPO_ACCESS) → patterns; commas
 * inside braces belong to the pattern (`/srv/{alpha,beta}/**` is one).
 */
export function splitPatternList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '{') depth++;
    else if (c === '}') depth = Math.max(0, depth - 1);
    if (c === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else current += c;
  }
  out.push(current);
  return out.map((x) => x.trim()).filter((x) => x.length > 0);
}

/** What the runner answers when a source is outside its `--repo-access`. */
export const REPO_ACCESS_DENIED = 'this runner cannot reach that repository';

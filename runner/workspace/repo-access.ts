import path from 'node:path';

/**
 * `--repo-access` patterns (RunnerRegister.repo_access): globs over the repository source string.
 * `*` matches within one path segment, `**` across segments, `?` one character. An empty list
 * or a "*" pattern allows every source.
 */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        re += '.*';
        i++;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** A local path is compared after normalising, so "/srv/code/../etc" does not pass as "/srv/code/**". */
function normaliseSource(source: string): string | null {
  if (path.isAbsolute(source)) return path.posix.normalize(source);
  // A URL with a ".." segment could mean another repository than the pattern names.
  if (/(^|\/)\.\.(\/|$)/.test(source)) return null;
  return source;
}

export function createRepoAccess(patterns: readonly string[]): (source: string) => boolean {
  if (patterns.length === 0 || patterns.includes('*')) return () => true;
  const res = patterns.map(globToRegExp);
  return (source) => {
    const s = normaliseSource(source);
    return s !== null && res.some((r) => r.test(s));
  };
}

export const REPO_ACCESS_DENIED = 'this runner cannot reach that repository';

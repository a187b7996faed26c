import picomatch from 'picomatch';
import type { EffectivePolicy } from './classify';

/**
 * Path guards: policy.forbidden_paths (never written) and policy.allowed_paths (when non-empty,
 * the only places written), globs relative to the worktree. `dot: true` so ".env" and
 * "secrets/.key" match like any other name.
 */
export interface PathGuard {
  /** The rule a write to `rel` breaks, or null. */
  violation(rel: string): string | null;
  readonly active: boolean;
}

export function pathGuard(policy: EffectivePolicy): PathGuard {
  const forbidden = policy.forbiddenPaths.map((g) => ({ g, m: picomatch(g, { dot: true }) }));
  const allowed = policy.allowedPaths.length ? picomatch(policy.allowedPaths, { dot: true }) : null;
  return {
    active: forbidden.length > 0 || allowed !== null,
    violation(rel: string): string | null {
      for (const f of forbidden) {
        // "secrets" also forbids everything below it.
        if (f.m(rel) || rel.split('/').some((_, i, parts) => f.m(parts.slice(0, i + 1).join('/')))) return `forbidden_paths "${f.g}"`;
      }
      if (allowed && !allowed(rel)) return 'outside allowed_paths';
      return null;
    },
  };
}

/**
 * A monorepo-shaped directory tree (packages/NAME/src/** several levels deep, plus docs, tools and
 * tests), generated deterministically: the big repository of the layout tests, the e2e spec and
 * bench/village.ts. Pure; no randomness.
 */
import type { RepoTree } from '../../protocol/world';

const AREAS = ['core', 'ui', 'api', 'data', 'auth', 'billing', 'search', 'jobs', 'mail', 'files', 'admin', 'metrics'];
const LEAVES = ['components', 'hooks', 'utils', 'models', 'services', 'handlers', 'views', 'styles', 'fixtures', 'types'];

/** `count` directories (exactly), the implicit root not included. */
export function monorepoTree(count: number, headSha = 'a1b2c3d'): RepoTree {
  const dirs: { path: string; files: number }[] = [];
  const add = (path: string) => {
    if (dirs.length < count) dirs.push({ path, files: (dirs.length * 7) % 9 });
  };
  for (const top of ['packages', 'docs', 'tools', 'tests', '.github', '.github/workflows']) add(top);
  for (let p = 0; dirs.length < count; p++) {
    const pkg = `packages/${AREAS[p % AREAS.length]}${p >= AREAS.length ? `-${Math.floor(p / AREAS.length)}` : ''}`;
    add(pkg);
    add(`${pkg}/src`);
    add(`${pkg}/test`);
    for (let i = 0; i < 4 && dirs.length < count; i++) {
      const mod = `${pkg}/src/${LEAVES[(p + i) % LEAVES.length]}`;
      add(mod);
      for (let j = 0; j < 3 && dirs.length < count; j++) {
        const sub = `${mod}/${LEAVES[(p + i + j + 3) % LEAVES.length]}`;
        add(sub);
        for (let k = 0; k < 2 && dirs.length < count; k++) add(`${sub}/deep-${k}`);
      }
    }
  }
  return { default_branch: 'main', head_sha: headSha, dirs, truncated: false };
}

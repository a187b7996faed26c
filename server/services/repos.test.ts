import { describe, expect, it } from 'vitest';
import { createRepoAccess } from '../../common/repo-access';
import { DEFAULT_PLANS } from './plans';
import { repoAllowed } from './limits';
import { canReach, repoRefFromSource } from './repos';

describe('repoRefFromSource', () => {
  it('reads provider, owner and name from git URLs', () => {
    expect(repoRefFromSource('https://github.com/acme/rocket.git')).toEqual({ provider: 'github', owner: 'acme', name: 'rocket' });
    expect(repoRefFromSource('git@gitlab.com:group/sub/app.git')).toEqual({ provider: 'gitlab', owner: 'group/sub', name: 'app' });
    expect(repoRefFromSource('ssh://git@git.example.org:2222/team/tool')).toEqual({ provider: 'git', owner: 'team', name: 'tool' });
  });
  it('names local repositories after their folder', () => {
    expect(repoRefFromSource('/srv/code/lamplighter/')).toEqual({ provider: 'local', owner: '', name: 'lamplighter' });
    expect(repoRefFromSource('file:///srv/code/x.git')).toEqual({ provider: 'local', owner: '', name: 'x' });
  });
});

describe('canReach (runner repo_access)', () => {
  it('allows everything with no patterns or "*"', () => {
    expect(canReach([], '/any/where')).toBe(true);
    expect(canReach(['*'], 'https://github.com/a/b')).toBe(true);
  });
  it('matches globs over the source string', () => {
    expect(canReach(['/srv/code/**'], '/srv/code/team/app')).toBe(true);
    expect(canReach(['/srv/code/**'], '/home/me/app')).toBe(false);
    expect(canReach(['https://github.com/acme/*'], 'https://github.com/acme/rocket.git')).toBe(true);
    expect(canReach(['https://github.com/acme/*'], 'https://github.com/other/rocket.git')).toBe(false);
  });
  it('placement agrees with the runner on every case, braces included (one matcher for both)', () => {
    const cases: Array<[string[], string]> = [
      [['/srv/{a,b}/**'], '/srv/a/x'],
      [['/srv/{a,b}/**'], '/srv/c/x'],
      [['/srv/{a,b}/**'], '/srv/{a,b}/x'],
      [['/srv/code/**'], '/srv/code/../etc'],
      [['https://github.com/acme/*'], 'https://github.com/acme/web/../../evil/x'],
      [['/srv/[ab]?/*'], '/srv/a1/x'],
      [['github.com/acme/*'], 'git@github.com:Acme/Rocket.git'],
    ];
    for (const [patterns, source] of cases) expect(canReach(patterns, source), `${patterns} vs ${source}`).toBe(createRepoAccess(patterns)(source));
    expect(canReach(['/srv/{a,b}/**'], '/srv/b/x')).toBe(true);
    expect(canReach(['/srv/{a,b}/**'], '/srv/{a,b}/x')).toBe(false);
  });
});

describe('plan repository allowlist', () => {
  const plan = { id: 'enterprise' as const, ...DEFAULT_PLANS.enterprise, allowed_repos: ['/srv/allowed/**'] };
  it('matches the source only, never the display name an admin typed', () => {
    expect(repoAllowed(plan, { name: 'ok', source: '/srv/allowed/ok' })).toBe(true);
    expect(repoAllowed(plan, { name: '/srv/allowed/disguised', source: '/srv/secret/repo' })).toBe(false);
    expect(repoAllowed(plan, { name: 'x', source: '/srv/allowed/../secret/repo' })).toBe(false);
  });
});

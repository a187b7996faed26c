import { describe, expect, it } from 'vitest';
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
});

import { describe, expect, it } from 'vitest';
import { canonicalSource, parseSource } from './git-url';
import { createRepoAccess, splitPatternList } from './repo-access';

describe('repository-access globs (runner --repo-access, server placement, plan allowlists)', () => {
  it('an empty list or "*" allows everything', () => {
    expect(createRepoAccess([])('/anything')).toBe(true);
    expect(createRepoAccess(['/x/*', '*'])('https://example.com/a/b')).toBe(true);
  });

  it('* stays within a segment, ** crosses them; local paths are normalised first', () => {
    const can = createRepoAccess(['/srv/code/**', 'https://github.com/acme/*']);
    expect(can('/srv/code/app')).toBe(true);
    expect(can('/srv/code/team/app')).toBe(true);
    expect(can('/srv/code/../etc')).toBe(false);
    expect(can('/srv/other')).toBe(false);
    expect(can('https://github.com/acme/web')).toBe(true);
    expect(can('https://github.com/acme/rocket.git')).toBe(true);
    expect(can('https://github.com/acme/web/../../evil/x')).toBe(false);
    expect(can('https://github.com/evil/web')).toBe(false);
    expect(can('https://github.com/acme/team/web')).toBe(false);
    expect(createRepoAccess(['a.b?c'])('a.bXc')).toBe(true);
    expect(createRepoAccess(['a.b?c'])('aXbXc')).toBe(false);
  });

  it('braces and classes work as in a shell (the runner\'s old matcher took them literally)', () => {
    const can = createRepoAccess(['/srv/{alpha,beta}/**', 'https://github.com/acme/[rw]eb']);
    expect(can('/srv/alpha/app')).toBe(true);
    expect(can('/srv/beta/x/y')).toBe(true);
    expect(can('/srv/gamma/app')).toBe(false);
    expect(can('/srv/{alpha,beta}/app')).toBe(false);
    expect(can('https://github.com/acme/web')).toBe(true);
    expect(can('https://github.com/acme/xeb')).toBe(false);
  });

  it('a pattern may name the canonical spelling: every URL form of one repository matches it', () => {
    const can = createRepoAccess(['github.com/acme/*']);
    for (const s of ['https://github.com/Acme/Rocket.git', 'git@github.com:acme/rocket.git', 'ssh://git@github.com/acme/rocket']) expect(can(s)).toBe(true);
    expect(can('https://github.com/other/rocket')).toBe(false);
  });
});

describe('pattern lists', () => {
  it('split on commas outside braces', () => {
    expect(splitPatternList(' /srv/{a,b}/** , https://github.com/acme/*,,')).toEqual(['/srv/{a,b}/**', 'https://github.com/acme/*']);
    expect(splitPatternList('')).toEqual([]);
  });
});

describe('git URL parsing', () => {
  it('reads host, owner and name from every URL form', () => {
    expect(parseSource('https://github.com/acme/rocket.git')).toMatchObject({ kind: 'remote', host: 'github.com', owner: 'acme', name: 'rocket' });
    expect(parseSource('git@gitlab.com:group/sub/app.git')).toMatchObject({ kind: 'remote', host: 'gitlab.com', owner: 'group/sub', name: 'app' });
    expect(parseSource('ssh://git@git.example.org:2222/team/tool')).toMatchObject({ host: 'git.example.org', port: 2222, owner: 'team', name: 'tool' });
    expect(parseSource('https://user:pw@10.0.0.5/x/y.git')).toMatchObject({ host: '10.0.0.5', owner: 'x', name: 'y' });
    expect(parseSource('https://[::1]:8080/a/b')).toMatchObject({ host: '[::1]', port: 8080 });
    expect(parseSource('/srv/code/lamplighter/')).toEqual({ kind: 'local', path: '/srv/code/lamplighter' });
    expect(parseSource('file:///srv/code/x.git')).toEqual({ kind: 'local', path: '/srv/code/x' });
    expect(parseSource('not a url')).toBeNull();
  });

  it('spells every URL form of one repository the same', () => {
    const forms = ['https://github.com/Acme/Repo.git', 'https://github.com/acme/repo', 'git@github.com:acme/repo.git', 'ssh://git@github.com/acme/repo', 'git://github.com/acme/repo.git/', 'https://token@github.com:443/acme/repo'];
    expect(new Set(forms.map(canonicalSource))).toEqual(new Set(['github.com/acme/repo']));
    expect(canonicalSource('/srv/code/app/')).toBe('/srv/code/app');
    expect(canonicalSource('file:///srv/code/app.git')).toBe('/srv/code/app');
    expect(canonicalSource('/srv/code/app')).not.toBe(canonicalSource('/srv/code/App'));
  });
});

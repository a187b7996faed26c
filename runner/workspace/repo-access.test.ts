import { describe, expect, it } from 'vitest';
import { createRepoAccess, globToRegExp } from './repo-access';

describe('repo access patterns', () => {
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
    expect(can('https://github.com/acme/web/../../evil/x')).toBe(false);
    expect(can('https://github.com/evil/web')).toBe(false);
    expect(can('https://github.com/acme/team/web')).toBe(false);
    expect(globToRegExp('a.b?c').test('a.bXc')).toBe(true);
    expect(globToRegExp('a.b?c').test('aXbXc')).toBe(false);
  });
});

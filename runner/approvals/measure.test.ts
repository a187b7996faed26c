import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { effectivePolicy, classifyArgv } from '../policy/classify';
import { deployHosts, measureGit, measureInstall, packageName } from './measure';
import { installSpecs, measureAction } from './measure-action';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repo(): { dir: string; git: (...a: string[]) => string; write: (f: string, text: string) => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'av-measure-'));
  dirs.push(dir);
  const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' } });
  const write = (f: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  };
  git('init', '-q', '-b', 'main');
  write('README.md', 'one\n');
  write('src/a.js', 'a\n');
  git('add', '-A');
  git('commit', '-qm', 'init');
  return { dir, git, write };
}

describe('the range an approval measures', () => {
  it('`git merge feat` on main counts what feat changed since they diverged (README.md, not 0 files)', async () => {
    const r = repo();
    r.git('checkout', '-qb', 'feat');
    r.write('README.md', 'one\ntwo\nthree\n');
    r.git('commit', '-qam', 'readme');
    r.git('checkout', '-q', 'main');
    // main moves on too: its own change must not count as what the merge brings.
    r.write('src/a.js', 'a\nb\n');
    r.git('commit', '-qam', 'main work');
    const m = await measureGit(r.dir, ['git', 'merge', 'feat'], 'main', 'main');
    expect(m.changed_files).toBe(1);
    expect(m.diff_stat).toContain('README.md');
    expect(m.blast_radius).toEqual({ kind: 'files', files: [{ path: 'README.md', added: 2, deleted: 0 }], total_files: 1, lines_added: 2, lines_deleted: 0 });
    expect(m.range).toMatch(/^[0-9a-f]{12}\.\.feat$/);
  });

  it('a hook line `git checkout main && git merge feat` asked on feat measures into main', async () => {
    const r = repo();
    r.git('checkout', '-qb', 'feat');
    r.write('docs/x.md', 'x\n');
    r.git('add', '-A');
    r.git('commit', '-qm', 'docs');
    const argv = ['git', 'merge', '--no-ff', '-q', '-m', 'Merge feat: docs', 'feat'];
    const c = classifyArgv(argv, effectivePolicy({}), 'main')!;
    const m = await measureAction(c, argv, r.dir, 'feat');
    expect(m.changed_files).toBe(1);
    expect(m.blast_radius).toMatchObject({ kind: 'files', total_files: 1, lines_added: 1 });
  });

  it('a push measures the commits the remote does not have (remote-tracking ref..src)', async () => {
    const origin = repo();
    const r = repo();
    r.git('remote', 'add', 'origin', origin.dir);
    r.git('fetch', '-q', 'origin');
    r.git('reset', '-q', '--hard', 'origin/main');
    r.write('src/b.js', 'b\nb\nb\n');
    r.write('src/a.js', 'changed\n');
    r.git('add', '-A');
    r.git('commit', '-qm', 'two files');
    const m = await measureGit(r.dir, ['git', 'push', 'origin', 'HEAD:main'], 'main');
    expect(m.changed_files).toBe(2);
    expect(m.range).toBe('origin/main..HEAD');
    expect(m.blast_radius).toMatchObject({ kind: 'files', total_files: 2, lines_added: 4, lines_deleted: 1 });
    // Nothing new: nothing pushed.
    r.git('fetch', '-q', '.', 'HEAD:refs/remotes/origin/main');
    expect((await measureGit(r.dir, ['git', 'push', 'origin', 'main'], 'main')).changed_files).toBe(0);
  });

  it('an unknown source says nothing rather than a wrong figure', async () => {
    const r = repo();
    expect(await measureGit(r.dir, ['git', 'merge', 'no-such-branch'], 'main', 'main')).toEqual({});
  });
});

describe('blast radius of installs and deploys', () => {
  it('reads licences offline from the lockfile, then node_modules', async () => {
    const r = repo();
    r.write('package-lock.json', JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/left-pad': { version: '1.3.0', license: 'WTFPL' } } }));
    r.write('node_modules/@scope/util/package.json', JSON.stringify({ name: '@scope/util', version: '2.0.1', license: { type: 'Apache-2.0' } }));
    const m = await measureInstall(r.dir, installSpecs(['npm', 'install', '--save-dev', 'left-pad@^1', '@scope/util', 'unknown-pkg']));
    expect(m.blast_radius).toEqual({
      kind: 'packages',
      packages: [
        { name: 'left-pad', version: '1.3.0', license: 'WTFPL' },
        { name: '@scope/util', version: '2.0.1', license: 'Apache-2.0' },
        { name: 'unknown-pkg', version: null, license: null },
      ],
    });
    expect(packageName('@scope/util@1.2')).toBe('@scope/util');
    expect(packageName('./local')).toBeNull();
  });

  it('names the hosts a deploy points at', () => {
    expect(deployHosts(['kubectl', 'apply', '--server=https://k8s.prod.example.com:6443', '-f', 'x.yaml'])).toEqual(['k8s.prod.example.com']);
    expect(deployHosts(['rsync', '-a', 'dist/', 'deploy@web1.example.org:/srv/www'])).toEqual(['web1.example.org']);
    expect(deployHosts(['npm', 'publish', '--registry', 'https://registry.npmjs.org/'])).toEqual(['registry.npmjs.org']);
  });
});

describe('"always allow this" in the policy', () => {
  it('skips asking only for the exact kind (category and rule) it names', async () => {
    const { needsAsking } = await import('../policy/classify');
    const policy = effectivePolicy({ always_allow: [{ category: 'merge', rule: 'merge into protected branch main' }] });
    expect(needsAsking(policy, classifyArgv(['git', 'merge', 'feat'], policy, 'main')!)).toBe(false);
    expect(needsAsking(policy, classifyArgv(['git', 'merge', 'feat'], policy, 'master')!)).toBe(true);
    expect(needsAsking(policy, classifyArgv(['git', 'push', 'origin', 'main'], policy, 'main')!)).toBe(true);
    expect(needsAsking(effectivePolicy({}), classifyArgv(['git', 'merge', 'feat'], policy, 'main')!)).toBe(true);
  });
});

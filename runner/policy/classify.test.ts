import { describe, expect, it } from 'vitest';
import { blockedBy, blockedCommandLine, classifyArgv, classifyCommandLine, effectivePolicy, splitCommandLine, asks } from './classify';

const policy = effectivePolicy({ shell_denylist: ['rm -rf /', 'curl'], deploy_patterns: ['kubectl apply'], protected_branches: ['main', 'release'] });
const cat = (argv: string[], current: string | null = null) => classifyArgv(argv, policy, current)?.category ?? null;

describe('classifyArgv', () => {
  it('merges and pushes into protected branches', () => {
    expect(cat(['git', 'merge', 'feature'], 'main')).toBe('merge');
    expect(cat(['git', 'merge', 'feature'], 'agent/x')).toBeNull();
    expect(cat(['git', 'push', 'origin', 'HEAD:main'], 'agent/x')).toBe('merge');
    expect(cat(['git', 'push', 'origin', '+agent/x:refs/heads/release'])).toBe('merge');
    expect(cat(['git', 'push', 'origin', 'agent/x'])).toBeNull();
    expect(cat(['git', 'push', '--all'])).toBe('merge');
    expect(cat(['git', '-C', '/repo', 'push', 'origin', 'main'])).toBe('merge');
    expect(classifyArgv(['git', 'push', 'origin', 'main'], policy)).toMatchObject({ target_branch: 'main', risk: 'high' });
  });

  it('dependency additions, secrets and deploys; plain installs and reads run', () => {
    expect(cat(['npm', 'install', 'left-pad'])).toBe('deps_add');
    expect(cat(['npm', 'i', '-D', 'vitest'])).toBe('deps_add');
    expect(cat(['yarn', 'add', 'react'])).toBe('deps_add');
    expect(cat(['pip', 'install', 'requests'])).toBe('deps_add');
    expect(cat(['npm', 'install'])).toBeNull();
    expect(cat(['npm', 'ci'])).toBeNull();
    expect(cat(['npm', 'test'])).toBeNull();
    expect(cat(['av-secret', 'API_TOKEN'])).toBe('secrets');
    expect(cat(['kubectl', 'apply', '-f', 'x.yaml'])).toBe('deploy');
    expect(cat(['kubectl', 'get', 'pods'])).toBeNull();
    expect(cat(['git', 'status'])).toBeNull();
  });

  it('auto_merge lets merges through only when approval is not also required for them', () => {
    expect(asks(effectivePolicy({ auto_merge: true, requires_approval_for: ['deps_add'] }), 'merge')).toBe(false);
    expect(asks(effectivePolicy({ auto_merge: true }), 'merge')).toBe(true);
    expect(asks(effectivePolicy({ requires_approval_for: [] }), 'merge')).toBe(true);
  });
});

describe('command lines (hooks, typed lines)', () => {
  it('splits with quotes, operators and comments; expands nothing', () => {
    expect(splitCommandLine(`git commit -m "a && b" && git push origin 'main' # push it`)).toEqual([
      ['git', 'commit', '-m', 'a && b'],
      ['git', 'push', 'origin', 'main'],
    ]);
    expect(splitCommandLine('echo $HOME | tee out.txt; ls *.md')).toEqual([['echo', '$HOME'], ['tee', 'out.txt'], ['ls', '*.md']]);
    expect(splitCommandLine('cat < in.txt > out.txt\nnpm test')).toEqual([['cat'], ['npm', 'test']]);
  });

  it('looks through env, sudo, nohup and bash -c / sh -c', () => {
    expect(splitCommandLine(`FOO=1 env -i sudo bash -c 'git push origin main'`)).toEqual([['git', 'push', 'origin', 'main']]);
    expect(classifyCommandLine(`sh -c "cd /x && git merge feature"`, policy, 'main')?.classification.category).toBe('merge');
    expect(classifyCommandLine('nohup npm install left-pad &', policy)?.argv).toEqual(['npm', 'install', 'left-pad']);
  });

  it('follows a checkout of the target branch earlier in the line', () => {
    const found = classifyCommandLine('git switch -q main && git merge --no-ff agent/x', policy, 'agent/x');
    expect(found).toMatchObject({ argv: ['git', 'merge', '--no-ff', 'agent/x'], classification: { category: 'merge', target_branch: 'main' } });
    expect(classifyCommandLine('git switch -q feature && git merge agent/x', policy, 'main')).toBeNull();
  });

  it('denylist: by prefix of words, by absolute path, anywhere in the line', () => {
    expect(blockedBy(['curl', 'https://example.com'], policy)).toContain('curl');
    expect(blockedBy(['/usr/bin/curl', '-s', 'x'], policy)).toContain('curl');
    expect(blockedBy(['rm', '-rf', '/'], policy)).toContain('rm -rf /');
    expect(blockedBy(['rm', '-rf', 'build'], policy)).toBeNull();
    expect(blockedCommandLine(`ls && bash -c 'curl -s x | sh'`, policy)?.argv).toEqual(['curl', '-s', 'x']);
    expect(blockedCommandLine('echo curl is a word here', policy)).toBeNull();
  });

  it('allowlist: only the listed first words run', () => {
    const strict = effectivePolicy({ shell_allowlist: ['git', 'ls'] });
    expect(blockedBy(['ls', '-la'], strict)).toBeNull();
    expect(blockedBy(['python3', 'x.py'], strict)).toContain('python3');
  });
});

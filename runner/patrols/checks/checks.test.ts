import { describe, expect, it } from 'vitest';
import { checkDeps } from './deps';
import { ALLOW_MARKER, scanSecrets } from './secrets';
import { formatFinding } from './types';

const reader = (files: Record<string, string>) => ({ read: (p: string) => files[p] ?? null });
const lock = (root: Record<string, string>, packages: Record<string, string>) =>
  JSON.stringify({
    lockfileVersion: 3,
    packages: { '': { dependencies: root }, ...Object.fromEntries(Object.entries(packages).map(([k, v]) => [`node_modules/${k}`, { version: v }])) },
  }, null, 2);

describe('av-check deps (offline)', () => {
  const pkg = JSON.stringify({ dependencies: { zod: '^4.1.0', semver: '~7.8.0' } }, null, 2);

  it('a consistent lockfile passes', () => {
    expect(checkDeps(reader({ 'package.json': pkg, 'package-lock.json': lock({ zod: '^4.1.0', semver: '~7.8.0' }, { zod: '4.6.7', semver: '7.8.6' }) }))).toEqual([]);
  });

  it('no lockfile is an error; no dependencies needs none', () => {
    expect(checkDeps(reader({ 'package.json': pkg })).map(formatFinding)).toEqual([
      'package.json:1: error: dependencies but no lockfile (package-lock.json, yarn.lock or pnpm-lock.yaml): installs are not reproducible',
    ]);
    expect(checkDeps(reader({ 'package.json': '{"name":"x"}' }))).toEqual([]);
  });

  it('a lockfile out of sync with package.json, or a locked version outside the range, is an error', () => {
    const out = checkDeps(reader({ 'package.json': pkg, 'package-lock.json': lock({ zod: '^3.0.0', left: '^1.0.0' }, { zod: '3.2.0', left: '1.0.0' }) })).map(formatFinding);
    expect(out).toEqual([
      'package.json:3: error: zod: package.json asks for "^4.1.0" but package-lock.json was made for "^3.0.0" (run npm install)',
      'package.json:4: error: semver is in package.json but not in package-lock.json (run npm install and commit package-lock.json)',
      'package-lock.json:13: error: package-lock.json still lists left, which package.json no longer has (run npm install)',
    ]);
    const stale = checkDeps(reader({ 'package.json': pkg, 'package-lock.json': lock({ zod: '^4.1.0', semver: '~7.8.0' }, { zod: '4.0.1', semver: '7.8.6' }) }));
    expect(stale.map((f) => f.message)).toEqual(['zod@4.0.1 is locked but package.json asks for "^4.1.0"']);
  });

  it('drift is a warning: unpinned ranges, git sources, several majors, node_modules that differ', () => {
    const drifty = JSON.stringify({ dependencies: { a: '*', b: 'github:acme/b', c: '^1.0.0' } });
    const packages = { a: '1.0.0', b: '1.0.0', c: '1.0.0', 'x/node_modules/c': '2.0.0', 'y/node_modules/c': '3.0.0' };
    const out = checkDeps(reader({ 'package.json': drifty, 'package-lock.json': lock({ a: '*', b: 'github:acme/b', c: '^1.0.0' }, packages), 'node_modules/c/package.json': '{"version":"1.0.1"}' }));
    expect(out.every((f) => f.severity === 'warning')).toBe(true);
    expect(out.map((f) => f.message)).toEqual([
      'a@"*" is unpinned: any version may install',
      'b comes from outside the registry (github:acme/b)',
      'c@1.0.1 is installed but package-lock.json locks 1.0.0 (run npm ci)',
      'c is locked at 3 major versions (1, 2, 3)',
    ]);
  });

  it('yarn.lock must mention every direct dependency; requirements.txt pins are checked', () => {
    expect(checkDeps(reader({ 'package.json': pkg, 'yarn.lock': '"zod@^4.1.0":\n  version "4.6.7"\n' })).map((f) => f.message)).toEqual([
      'semver is in package.json but not in yarn.lock (run the install and commit the lockfile)',
    ]);
    expect(checkDeps(reader({ 'requirements.txt': 'requests==2.32.0\nflask>=3\n# comment\n' })).map(formatFinding)).toEqual(['requirements.txt:2: warning: flask>=3 is not pinned with ==']);
  });
});

describe('av-check secrets (the redaction patterns)', () => {
  const scan = (files: Record<string, string>) =>
    scanSecrets({ files: Object.keys(files), read: (p) => (files[p] === undefined ? null : Buffer.from(files[p]!)) }).findings.map(formatFinding);

  it('reports the rule and the line masked, never the value', () => {
    const key = `ghp_${'a1B2'.repeat(9)}`;
    const out = scan({ 'src/config.js': `export const url = 'x';\nexport const gh = '${key}';\n`, '.env': 'DB_PASSWORD=hunter2hunter\n' });
    expect(out).toEqual([
      "src/config.js:2: error: possible secret (github-token): export const gh = 'ghp_[redacted]';",
      '.env:1: error: possible secret (secret-assignment): DB_PASSWORD=[redacted]',
    ]);
    expect(out.join('\n')).not.toContain(key);
  });

  it('code that names a secret is not one; literals are; the allow marker and binary files are skipped', () => {
    expect(scan({ 'a.ts': 'const token = randomBytes(32);\nconst t = { token: opts.token };\nfunction f(password: string) {}\n' })).toEqual([]);
    expect(scan({ 'a.ts': "const cfg = { password: 'Sup3rS3cret!' };\n" })).toHaveLength(1);
    expect(scan({ 'a.ts': `const cfg = { password: 'Sup3rS3cret!' }; // ${ALLOW_MARKER}\n` })).toEqual([]);
    expect(scanSecrets({ files: ['x.bin'], read: () => Buffer.from([0, 1, 2]) })).toMatchObject({ findings: [], scanned: 0, skipped: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import { demoRepoFiles } from '../testing/demo-repo';
import { BUILTIN_DEPS_COMMAND, BUILTIN_SECURITY_COMMAND, detectPatrolCommands } from './detect';

describe('detectPatrolCommands', () => {
  it('reads the demo repository: npm test and the build script, no lint, the built-in checks', () => {
    const files = demoRepoFiles();
    const d = detectPatrolCommands(Object.keys(files), { 'package.json': files['package.json'] });
    expect(d.commands).toEqual({ lint: null, test: 'npm test', build: 'npm run build', deps: BUILTIN_DEPS_COMMAND, security: BUILTIN_SECURITY_COMMAND });
    expect(d.notes).toContain('test: package.json scripts.test');
  });

  it('uses the package manager of the lockfile and prefers scripts over config files', () => {
    const pkg = JSON.stringify({ scripts: { lint: 'eslint .', test: 'vitest run', typecheck: 'tsc --noEmit' } });
    const d = detectPatrolCommands(['package.json', 'pnpm-lock.yaml', 'eslint.config.mjs', 'tsconfig.json'], { 'package.json': pkg });
    expect(d.commands).toMatchObject({ lint: 'pnpm lint', test: 'pnpm test', build: 'pnpm typecheck' });
    const y = detectPatrolCommands(['package.json', 'yarn.lock'], { 'package.json': JSON.stringify({ scripts: { build: 'tsc' } }) });
    expect(y.commands.build).toBe('yarn build');
  });

  it('ignores npm init’s placeholder test script and falls back to config files', () => {
    const pkg = JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } });
    const d = detectPatrolCommands(['package.json', '.eslintrc.json', 'tsconfig.json'], { 'package.json': pkg });
    expect(d.commands).toMatchObject({ lint: 'npx --no-install eslint .', test: null, build: 'npx --no-install tsc --noEmit' });
  });

  it('Makefile targets, then Python, Go and Rust defaults', () => {
    expect(detectPatrolCommands(['Makefile', 'go.mod'], { Makefile: 'test:\n\tgo test ./...\nlint: vet\n' }).commands).toMatchObject({
      lint: 'make lint',
      test: 'make test',
      build: 'go build ./...',
    });
    expect(detectPatrolCommands(['pyproject.toml', 'tests/test_app.py', 'ruff.toml'], { 'pyproject.toml': '[project]\nname="x"\n' }).commands).toMatchObject({
      lint: 'ruff check .',
      test: 'python3 -m pytest -q',
      build: 'python3 -m compileall -q .',
    });
    expect(detectPatrolCommands(['Cargo.toml'], {}).commands).toMatchObject({ test: 'cargo test --offline', build: 'cargo build --offline' });
  });

  it('a malformed package.json suggests nothing from it', () => {
    expect(detectPatrolCommands(['package.json'], { 'package.json': '{ not json' }).commands).toMatchObject({ lint: null, test: null, build: null });
  });
});

import type { PatrolDefaults } from '../../protocol';

/**
 * Suggests patrol commands from what a repository ships: package.json scripts (with its package
 * manager's lockfile), a Makefile's targets, and the usual Python, Go and Rust layouts. Pure: the
 * caller reads the files (DETECT_FILES) from the default branch and lists every path.
 *
 * Order of preference per kind: the project's own entry point (package.json script, Makefile
 * target), then a language default. The dependency and security checks are the runner's own
 * offline checks (`av-check`, see runner/patrols/checks) and always apply.
 */

/** Files whose contents detection reads (only those that exist are passed in). */
export const DETECT_FILES = [
  'package.json',
  'Makefile',
  'pyproject.toml',
  'setup.cfg',
  'tox.ini',
  'pytest.ini',
  'go.mod',
  'Cargo.toml',
] as const;

/** The built-in offline checks every repository gets (runner/patrols/checks/cli.ts). */
export const BUILTIN_DEPS_COMMAND = 'av-check deps';
export const BUILTIN_SECURITY_COMMAND = 'av-check secrets';

/** `npm init` writes this test script; it is not a test suite. */
const NPM_PLACEHOLDER_TEST = /no test specified/;

type Pm = 'npm' | 'yarn' | 'pnpm' | 'bun';

function packageManager(files: ReadonlySet<string>): Pm {
  if (files.has('pnpm-lock.yaml')) return 'pnpm';
  if (files.has('yarn.lock')) return 'yarn';
  if (files.has('bun.lockb') || files.has('bun.lock')) return 'bun';
  return 'npm';
}

function runScript(pm: Pm, script: string): string {
  if (script === 'test') return pm === 'bun' ? 'bun run test' : `${pm} test`;
  if (pm === 'npm' || pm === 'bun') return `${pm} run ${script}`;
  return `${pm} ${script}`;
}

function parseJson(text: string | undefined): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function makeTargets(makefile: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const m of (makefile ?? '').matchAll(/^([A-Za-z][\w-]*)\s*:(?!=)/gm)) out.add(m[1]!);
  return out;
}

export function detectPatrolCommands(files: readonly string[], contents: Partial<Record<(typeof DETECT_FILES)[number], string>>): PatrolDefaults {
  const all = new Set(files);
  const notes: string[] = [];
  const commands: PatrolDefaults['commands'] = { lint: null, test: null, build: null, deps: BUILTIN_DEPS_COMMAND, security: BUILTIN_SECURITY_COMMAND };
  const set = (kind: 'lint' | 'test' | 'build', command: string, why: string) => {
    if (commands[kind] !== null) return;
    commands[kind] = command;
    notes.push(`${kind}: ${why}`);
  };

  const pkg = parseJson(contents['package.json']);
  if (pkg) {
    const scripts = (pkg.scripts && typeof pkg.scripts === 'object' ? pkg.scripts : {}) as Record<string, unknown>;
    const has = (s: string) => typeof scripts[s] === 'string' && (scripts[s] as string).trim() !== '';
    const pm = packageManager(all);
    if (has('lint')) set('lint', runScript(pm, 'lint'), 'package.json scripts.lint');
    if (has('test') && !NPM_PLACEHOLDER_TEST.test(scripts.test as string)) set('test', runScript(pm, 'test'), 'package.json scripts.test');
    if (has('build')) set('build', runScript(pm, 'build'), 'package.json scripts.build');
    else if (has('typecheck')) set('build', runScript(pm, 'typecheck'), 'package.json scripts.typecheck');
  }

  const make = makeTargets(contents.Makefile);
  for (const kind of ['lint', 'test', 'build'] as const) if (make.has(kind)) set(kind, `make ${kind}`, `Makefile target ${kind}`);

  if (pkg) {
    const eslintConfig = [...all].find((f) => /^(eslint\.config\.(js|mjs|cjs|ts)|\.eslintrc(\.(js|cjs|json|ya?ml))?)$/.test(f));
    if (eslintConfig) set('lint', 'npx --no-install eslint .', `${eslintConfig} (ESLint from the repository's own node_modules)`);
    if (all.has('tsconfig.json')) set('build', 'npx --no-install tsc --noEmit', 'tsconfig.json (TypeScript compiler, no output)');
  }

  const pyproject = contents['pyproject.toml'] ?? '';
  const isPython = all.has('pyproject.toml') || all.has('setup.py') || all.has('requirements.txt') || all.has('setup.cfg');
  if (isPython) {
    const pytestConfigured =
      all.has('pytest.ini') || /\[tool\.pytest/.test(pyproject) || /\[(tool:)?pytest\]/.test((contents['setup.cfg'] ?? '') + (contents['tox.ini'] ?? ''));
    const hasTests = [...all].some((f) => /(^|\/)(test_[^/]*|[^/]*_test)\.py$/.test(f));
    if (pytestConfigured || hasTests) set('test', 'python3 -m pytest -q', pytestConfigured ? 'pytest configuration' : 'test_*.py files (pytest)');
    if (all.has('ruff.toml') || all.has('.ruff.toml') || /\[tool\.ruff/.test(pyproject)) set('lint', 'ruff check .', 'ruff configuration');
    else if (all.has('.flake8') || /\[flake8\]/.test((contents['setup.cfg'] ?? '') + (contents['tox.ini'] ?? ''))) set('lint', 'python3 -m flake8', 'flake8 configuration');
    set('build', 'python3 -m compileall -q .', 'Python sources (every file compiles)');
  }

  if (all.has('go.mod')) {
    set('test', 'go test ./...', 'go.mod');
    set('lint', 'go vet ./...', 'go.mod');
    set('build', 'go build ./...', 'go.mod');
  }
  if (all.has('Cargo.toml')) {
    set('test', 'cargo test --offline', 'Cargo.toml');
    set('lint', 'cargo clippy --offline', 'Cargo.toml');
    set('build', 'cargo build --offline', 'Cargo.toml');
  }

  notes.push(`deps: ${BUILTIN_DEPS_COMMAND} (offline: lockfile consistency and dependency drift)`);
  notes.push(`security: ${BUILTIN_SECURITY_COMMAND} (offline: tracked files scanned with the redaction patterns)`);
  return { commands, notes };
}

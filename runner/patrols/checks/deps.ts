import semver from 'semver';
import { lineOf, type CheckFinding } from './types';

/**
 * The dependency check, offline (no registry is asked anything): is the lockfile there and
 * consistent with the manifest, and has anything drifted.
 *
 * Errors (the patrol fails):
 * - a manifest with dependencies but no lockfile (installs are not reproducible);
 * - package-lock.json out of sync with package.json: a dependency missing from it, recorded with
 *   another range, or still listed after it was removed from package.json;
 * - a locked version that does not satisfy the range package.json asks for;
 * - yarn.lock / pnpm-lock.yaml that do not mention a direct dependency.
 * Warnings (reported, the patrol still passes):
 * - drift: unpinned ranges (`*`, `latest`, `x`, `>=`), sources outside the registry (git, URLs);
 * - drift: a package locked at several major versions at once;
 * - drift: an installed node_modules that differs from the lockfile;
 * - requirements.txt lines without an exact `==` pin.
 */

export interface DepsInput {
  /** Reads a file relative to the repository root; null when it does not exist. */
  read(path: string): string | null;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const DEP_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;

function parse(text: string | null): Json | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}

/** Ranges that let any version in: the installed tree changes under you. */
function unpinned(spec: string): boolean {
  const s = spec.trim();
  if (['', '*', 'x', 'X', 'latest', 'next'].includes(s)) return true;
  // ">=1.2" with no upper bound lets every future major in.
  return /^>=?\s*\d/.test(s) && !s.includes('<');
}

function outsideRegistry(spec: string): boolean {
  return /^(git\+|git:|github:|https?:|file:|link:)/.test(spec) || /^[\w-]+\/[\w.-]+(#.*)?$/.test(spec);
}

export function checkDeps(input: DepsInput): CheckFinding[] {
  const out: CheckFinding[] = [];
  const pkgText = input.read('package.json');
  if (pkgText !== null) out.push(...checkNpm(pkgText, input));
  const req = input.read('requirements.txt');
  if (req !== null) out.push(...checkRequirements(req));
  return out;
}

function checkNpm(pkgText: string, input: DepsInput): CheckFinding[] {
  const out: CheckFinding[] = [];
  const pkg = parse(pkgText);
  if (!pkg) return [{ path: 'package.json', line: 1, severity: 'error', message: 'package.json is not valid JSON' }];
  const wanted = new Map<string, { spec: string; field: string }>();
  for (const field of DEP_FIELDS) {
    const deps = pkg[field];
    if (!isObj(deps)) continue;
    for (const [name, spec] of Object.entries(deps)) if (typeof spec === 'string') wanted.set(name, { spec, field });
  }
  const at = (name: string) => lineOf(pkgText, `"${name}"`);
  for (const [name, { spec }] of wanted) {
    if (outsideRegistry(spec)) out.push({ path: 'package.json', line: at(name), severity: 'warning', message: `${name} comes from outside the registry (${spec})` });
    else if (unpinned(spec)) out.push({ path: 'package.json', line: at(name), severity: 'warning', message: `${name}@"${spec}" is unpinned: any version may install` });
  }
  if (wanted.size === 0) return out;

  const lockName = ['package-lock.json', 'npm-shrinkwrap.json'].find((f) => input.read(f) !== null);
  if (!lockName) {
    for (const other of ['yarn.lock', 'pnpm-lock.yaml']) {
      const text = input.read(other);
      if (text === null) continue;
      for (const name of wanted.keys()) {
        // yarn: "name@range" / name@range: ; pnpm: importers list name: or /name@version
        if (!text.includes(`${name}@`) && !text.includes(`\n      ${name}:`) && !text.includes(`'${name}'`) && !text.includes(`/${name}@`)) {
          out.push({ path: other, line: null, severity: 'error', message: `${name} is in package.json but not in ${other} (run the install and commit the lockfile)` });
        }
      }
      return out;
    }
    out.push({ path: 'package.json', line: 1, severity: 'error', message: 'dependencies but no lockfile (package-lock.json, yarn.lock or pnpm-lock.yaml): installs are not reproducible' });
    return out;
  }
  const lockText = input.read(lockName)!;
  const lock = parse(lockText);
  if (!lock) return [...out, { path: lockName, line: 1, severity: 'error', message: `${lockName} is not valid JSON` }];
  const packages = isObj(lock.packages) ? lock.packages : null;
  const lockLine = (name: string) => lineOf(lockText, `"node_modules/${name}"`) ?? lineOf(lockText, `"${name}"`);

  if (packages) {
    const root = isObj(packages['']) ? packages[''] : {};
    const recorded = new Map<string, string>();
    for (const field of DEP_FIELDS) {
      const deps = root[field];
      if (isObj(deps)) for (const [name, spec] of Object.entries(deps)) if (typeof spec === 'string') recorded.set(name, spec);
    }
    for (const [name, { spec }] of wanted) {
      const rec = recorded.get(name);
      if (rec === undefined) {
        out.push({ path: 'package.json', line: at(name), severity: 'error', message: `${name} is in package.json but not in ${lockName} (run npm install and commit ${lockName})` });
        continue;
      }
      if (rec !== spec) {
        out.push({ path: 'package.json', line: at(name), severity: 'error', message: `${name}: package.json asks for "${spec}" but ${lockName} was made for "${rec}" (run npm install)` });
        continue;
      }
      const entry = packages[`node_modules/${name}`];
      const version = isObj(entry) && typeof entry.version === 'string' ? entry.version : null;
      if (version && semver.validRange(spec) && !semver.satisfies(version, spec, { includePrerelease: true })) {
        out.push({ path: lockName, line: lockLine(name), severity: 'error', message: `${name}@${version} is locked but package.json asks for "${spec}"` });
      }
      if (version) {
        const installed = parse(input.read(`node_modules/${name}/package.json`));
        if (installed && typeof installed.version === 'string' && installed.version !== version) {
          out.push({ path: lockName, line: lockLine(name), severity: 'warning', message: `${name}@${installed.version} is installed but ${lockName} locks ${version} (run npm ci)` });
        }
      }
    }
    for (const name of recorded.keys()) {
      if (!wanted.has(name)) out.push({ path: lockName, line: lockLine(name), severity: 'error', message: `${lockName} still lists ${name}, which package.json no longer has (run npm install)` });
    }
    const majors = new Map<string, Set<number>>();
    for (const [key, entry] of Object.entries(packages)) {
      const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key);
      if (!m || !isObj(entry) || typeof entry.version !== 'string') continue;
      const major = semver.major(semver.coerce(entry.version) ?? '0.0.0');
      const set = majors.get(m[1]!) ?? new Set<number>();
      set.add(major);
      majors.set(m[1]!, set);
    }
    for (const [name, set] of majors) {
      if (set.size >= 3) out.push({ path: lockName, line: lockLine(name), severity: 'warning', message: `${name} is locked at ${set.size} major versions (${[...set].sort((a, b) => a - b).join(', ')})` });
    }
  } else if (isObj(lock.dependencies)) {
    // lockfileVersion 1
    out.push({ path: lockName, line: 1, severity: 'warning', message: `${lockName} is lockfileVersion 1 (npm 6); npm 7+ rewrites it` });
    for (const [name, { spec }] of wanted) {
      const entry = lock.dependencies[name];
      const version = isObj(entry) && typeof entry.version === 'string' ? entry.version : null;
      if (!version) out.push({ path: 'package.json', line: at(name), severity: 'error', message: `${name} is in package.json but not in ${lockName} (run npm install)` });
      else if (semver.validRange(spec) && semver.valid(version) && !semver.satisfies(version, spec)) {
        out.push({ path: lockName, line: lockLine(name), severity: 'error', message: `${name}@${version} is locked but package.json asks for "${spec}"` });
      }
    }
  }
  return out;
}

function checkRequirements(text: string): CheckFinding[] {
  const out: CheckFinding[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (!line || line.startsWith('-')) return;
    if (!/==/.test(line)) out.push({ path: 'requirements.txt', line: i + 1, severity: 'warning', message: `${line} is not pinned with ==` });
  });
  return out;
}

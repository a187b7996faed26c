import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BlastRadius } from '../../protocol';
import { git } from '../workspace/git';

/**
 * What an action would really change, measured on the runner before the approver sees it
 * (issue 19 item 3). A merge brings merge-base(HEAD, source)..source; a push sends
 * <remote>/<dst>..<src> (or <dst>..<src> when the remote ref is unknown). An install names the
 * packages and their licences as far as the workspace knows them offline; a deploy names the
 * hosts its command line points at. Nothing here runs the action itself.
 */

/** git calls for the approval context; a huge repository must not hold the request up. */
export const MEASURE_GIT_TIMEOUT_MS = 5_000;
/** Files listed one by one on the card; the totals still count every file. */
export const MAX_LISTED_FILES = 200;
/** Protocol limit on diff_stat. */
const MAX_DIFF_STAT = 20_000;

export interface Measured {
  changed_files?: number;
  diff_stat?: string;
  /** The revision range that was measured ("abc123..feat"). */
  range?: string;
  blast_radius?: BlastRadius;
}

const run = (cwd: string, args: string[]) => git(args, { cwd, what: args[0], timeoutMs: MEASURE_GIT_TIMEOUT_MS });

async function revParse(cwd: string, ref: string): Promise<string | null> {
  try {
    return (await run(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim() || null;
  } catch {
    return null;
  }
}

/** Files and lines of `from..to`, as `git diff --numstat` counts them (binary files count 0 lines). */
export async function measureRange(cwd: string, from: string, to: string): Promise<Measured> {
  const range = `${from}..${to}`;
  const [numstat, stat] = await Promise.all([run(cwd, ['diff', '--numstat', '-z', range, '--']), run(cwd, ['diff', '--stat', range, '--'])]);
  const files: { path: string; added: number; deleted: number }[] = [];
  // -z: "added\tdeleted\tpath\0", renames as "added\tdeleted\t\0old\0new\0".
  const parts = numstat.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(parts[i].replace(/^\n/, ''));
    if (!m) continue;
    let file = m[3];
    if (file === '') {
      file = parts[i + 2] ?? parts[i + 1] ?? '';
      i += 2;
    }
    files.push({ path: file, added: m[1] === '-' ? 0 : Number(m[1]), deleted: m[2] === '-' ? 0 : Number(m[2]) });
  }
  const lines_added = files.reduce((n, f) => n + f.added, 0);
  const lines_deleted = files.reduce((n, f) => n + f.deleted, 0);
  return {
    changed_files: files.length,
    diff_stat: stat.slice(0, MAX_DIFF_STAT),
    range,
    blast_radius: { kind: 'files', files: files.slice(0, MAX_LISTED_FILES), total_files: files.length, lines_added, lines_deleted },
  };
}

/**
 * `git merge feat` into `target`: what feat brings since the two diverged. The target is the
 * classified branch, not necessarily HEAD (`git checkout main && git merge feat` asks on feat).
 */
export async function measureMerge(cwd: string, target: string, source: string): Promise<Measured> {
  const head = await revParse(cwd, target);
  const src = await revParse(cwd, source);
  if (!head || !src) return {};
  const base = (await run(cwd, ['merge-base', head, src])).trim();
  if (!base) return {};
  const m = await measureRange(cwd, base, src);
  return { ...m, range: `${base.slice(0, 12)}..${source}` };
}

/**
 * `git push remote src:dst`: the commits the remote does not have yet. The remote-tracking ref
 * stands for the remote; when there is none, the local copy of dst does.
 */
export async function measurePush(cwd: string, remote: string | null, src: string, dst: string): Promise<Measured> {
  const srcSha = await revParse(cwd, src);
  if (!srcSha) return {};
  const candidates = [remote ? `refs/remotes/${remote}/${dst}` : null, `refs/heads/${dst}`].filter((r): r is string => r !== null);
  for (const ref of candidates) {
    const sha = await revParse(cwd, ref);
    if (!sha) continue;
    const m = await measureRange(cwd, sha, srcSha);
    return { ...m, range: `${ref.replace(/^refs\/(remotes|heads)\//, '')}..${src}` };
  }
  return {};
}

/** git merge / push options whose value is the next word. */
const OPTS_WITH_VALUE = new Set(['-m', '--message', '-F', '--file', '-s', '--strategy', '-X', '--strategy-option', '--into-name', '--cleanup', '-o', '--push-option', '--receive-pack', '--exec', '--repo']);

/** The merge source and push refspec in a git argv (what classify.ts saw as a merge). */
export function gitMergeTarget(argv: string[], current: string | null): { kind: 'merge'; source: string } | { kind: 'push'; remote: string | null; src: string; dst: string } | null {
  const args = argv.slice(1);
  let i = 0;
  while (i < args.length && args[i].startsWith('-')) i += args[i] === '-C' || args[i] === '-c' ? 2 : 1;
  const sub = args[i];
  const rest = args.slice(i + 1);
  const positional: string[] = [];
  for (let j = 0; j < rest.length; j++) {
    if (rest[j] === '--') continue;
    if (rest[j].startsWith('-')) {
      // `-m "Merge x"`: the message is not the branch.
      if (OPTS_WITH_VALUE.has(rest[j])) j++;
      continue;
    }
    positional.push(rest[j]);
  }
  if (sub === 'merge') {
    const source = positional[0];
    return source ? { kind: 'merge', source } : null;
  }
  if (sub === 'push') {
    const remote = positional[0] ?? null;
    const spec = positional[1] ?? current;
    if (!spec) return null;
    const s = spec.replace(/^\+/, '');
    const colon = s.indexOf(':');
    const src = colon >= 0 ? s.slice(0, colon) : s;
    const dst = (colon >= 0 ? s.slice(colon + 1) : s).replace(/^refs\/heads\//, '');
    if (!src) return null;
    return { kind: 'push', remote, src: src === '@' ? 'HEAD' : src, dst: dst === 'HEAD' || dst === '@' ? (current ?? dst) : dst };
  }
  return null;
}

/** A merge or push as git would do it; {} when git cannot say (unknown ref): the card shows the command. */
export async function measureGit(cwd: string, argv: string[], current: string | null, target?: string): Promise<Measured> {
  const t = gitMergeTarget(argv, current);
  try {
    if (t?.kind === 'merge') return await measureMerge(cwd, target ?? current ?? 'HEAD', t.source);
    if (t?.kind === 'push') return await measurePush(cwd, t.remote, t.src, t.dst);
  } catch {
    // git refused (not a repository, a timeout): the approver still sees the command.
  }
  return {};
}

// ---- installs ----

/** `lodash@4`, `@scope/pkg@^1`, `pkg` → the package name (versions and tags dropped). */
export function packageName(spec: string): string | null {
  if (/^(\.|\/|file:|git\+|https?:|-r |-e )/.test(spec)) return null;
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  const name = at > 0 ? spec.slice(0, at) : spec;
  return /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name) ? name : null;
}

type Lockfile = { packages?: Record<string, { version?: string; license?: string }>; dependencies?: Record<string, { version?: string }> };

async function readJson<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

function licenceOf(pkg: { license?: unknown; licenses?: unknown } | null): string | null {
  if (!pkg) return null;
  if (typeof pkg.license === 'string') return pkg.license;
  if (pkg.license && typeof pkg.license === 'object' && 'type' in pkg.license) return String((pkg.license as { type: unknown }).type);
  if (Array.isArray(pkg.licenses)) return pkg.licenses.map((l: { type?: string }) => l.type ?? '?').join(' OR ');
  return null;
}

/**
 * The packages an install adds and their licences, read offline: the lockfile's entry (npm 7+
 * records `license`), else the package's own package.json under node_modules (a package
 * already present elsewhere in the tree, or an earlier install). null licence: not known here.
 */
export async function measureInstall(cwd: string, specs: string[]): Promise<Measured> {
  const lock = await readJson<Lockfile>(path.join(cwd, 'package-lock.json'));
  const packages = [];
  for (const spec of specs) {
    const name = packageName(spec);
    if (!name) {
      packages.push({ name: spec, version: null, license: null });
      continue;
    }
    const entry = lock?.packages?.[`node_modules/${name}`];
    const installed = await readJson<{ version?: string; license?: unknown; licenses?: unknown }>(path.join(cwd, 'node_modules', name, 'package.json'));
    packages.push({ name, version: entry?.version ?? installed?.version ?? null, license: entry?.license ?? licenceOf(installed) });
  }
  return { blast_radius: { kind: 'packages', packages } };
}

// ---- deploys ----

const HOST_RE = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$/i;

/** Hosts a deploy command line points at: URLs, user@host, and the values of --host/--server/--context-like options. */
export function deployHosts(argv: string[]): string[] {
  const hosts = new Set<string>();
  const add = (h: string | undefined) => {
    if (h && (HOST_RE.test(h) || /^\d{1,3}(\.\d{1,3}){3}$/.test(h) || h === 'localhost')) hosts.add(h.toLowerCase());
  };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    const eq = /^--?(?:host|server|hostname|endpoint|url|registry|context|cluster)=(.+)$/i.exec(a);
    const flagged = eq !== null || /^--?(?:host|server|hostname|endpoint|url|registry|context|cluster)$/i.test(a);
    const value = eq ? eq[1] : flagged ? argv[++i] : a;
    if (!value) continue;
    try {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
        add(new URL(value).hostname);
        continue;
      }
    } catch {
      // not a URL after all
    }
    const at = /^[\w.-]+@([\w.-]+)(?::.*)?$/.exec(value);
    if (at) add(at[1]);
    // A bare word counts only after a host option: `x.yaml` looks like a host name too.
    else if (flagged) add(value.replace(/:\d+$/, ''));
  }
  return [...hosts];
}

export function measureDeploy(argv: string[]): Measured {
  return { blast_radius: { kind: 'hosts', hosts: deployHosts(argv) } };
}

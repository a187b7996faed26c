import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeAvDtaShim } from '../dta/session-bin';
import type { HookEndpoint } from '../hooks/hook-server';
import { SECRET_HELPER, type EffectivePolicy } from '../policy/classify';
import { bashQuote } from '../pty/clean-env';
import { READ_ONLY_DROPPED_CAPS } from '../workspace/read-only';

/**
 * The session's guard shims (ARCHITECTURE.md §8): one wrapper script per guarded program, first on
 * the session's PATH; with a mount namespace (runner is root) the same wrappers are also
 * bind-mounted over the real binaries (`/usr/bin/git`, `/usr/lib/git-core/git`, npm's
 * `npm-cli.js`, …), so an absolute path, `bash -c`, `sh -c`, `env -i` or a script reaches the guard
 * too. The real programs stay reachable for the guard through a bind of their install prefix
 * inside the session's home; that path is not a secret from a root agent that goes looking
 * (README, "Approvals and policy").
 */

export const AV_GUARD_PATH = fileURLToPath(new URL('./av-guard.mjs', import.meta.url));
/** Programs whose commands can need approval. */
export const APPROVAL_PROGRAMS = ['git', 'npm', 'pnpm', 'yarn', 'pip', 'pip3'];
/** Never wrapped even when denylisted: the wrappers themselves and the session's shell run on them. */
const NEVER_WRAP = new Set(['sh', 'bash', 'dash', 'node', 'env', 'mount', 'setpriv', 'unshare']);
/** One bind mount per forbidden file; past this the rest are detect-and-revert only. */
export const MAX_PROTECTED_FILES = 200;
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;

/** Where git keeps a second copy of itself (`git --exec-path`): it must be covered too. */
const EXTRA_COPIES: Record<string, string[]> = { git: ['/usr/lib/git-core/git', '/usr/libexec/git-core/git'] };

export function guardedPrograms(policy: EffectivePolicy): string[] {
  const names = new Set(APPROVAL_PROGRAMS);
  for (const p of policy.deployPatterns) names.add(path.posix.basename(p[0]));
  for (const d of policy.denylist) names.add(path.posix.basename(d[0]));
  return [...names].filter((n) => SAFE_NAME.test(n) && !NEVER_WRAP.has(n)).sort();
}

export interface ShimPlan {
  /** Put first on the session's PATH. */
  binDir: string;
  /** The guard's config (endpoint, real programs). */
  configPath: string;
  /** [source, target] bind mounts, in order: real prefixes first, then wrappers over the binaries. */
  binds: Array<[string, string]>;
}

function realpathOrNull(p: string): string | null {
  try {
    const r = fs.realpathSync(p);
    return fs.statSync(r).isFile() ? r : null;
  } catch {
    return null;
  }
}

/**
 * Writes the wrappers and the guard config into `<home>/.agent-village/` and returns what to
 * mount. `namespace` false: PATH shims only (the fallback when the runner is not root).
 */
export async function writeShims(opts: { home: string; endpoint: HookEndpoint; policy: EffectivePolicy; pathDirs: string[]; namespace: boolean }): Promise<ShimPlan> {
  const root = path.join(opts.home, '.agent-village');
  const binDir = path.join(root, 'bin');
  const realRoot = path.join(root, 'real');
  await fs.promises.mkdir(binDir, { recursive: true, mode: 0o700 });
  const configPath = path.join(root, 'guard.json');
  const real: Record<string, string> = {};
  const binds: Array<[string, string]> = [];
  const covered = new Set<string>();
  const wrapperFor = (name: string) =>
    ['#!/bin/sh', `# Agent Village guard for ${name} (generated for this session; removed with it).`, `exec ${[process.execPath, AV_GUARD_PATH, configPath, name].map(bashQuote).join(' ')} "$0" "$@"`, ''].join('\n');

  for (const name of guardedPrograms(opts.policy)) {
    const found = opts.pathDirs.map((d) => realpathOrNull(path.join(d, name))).filter((p): p is string => p !== null && !p.startsWith(root + path.sep));
    if (found.length === 0) continue;
    const wrapper = path.join(binDir, name);
    await fs.promises.writeFile(wrapper, wrapperFor(name), { mode: 0o755 });
    const first = found[0];
    if (!opts.namespace) {
      real[name] = first;
      continue;
    }
    // The install prefix (two levels up: /usr for /usr/bin/git, the package for npm's bin/npm-cli.js)
    // keeps scripts' relative requires working from the new place.
    const prefix = path.dirname(path.dirname(first));
    const dest = path.join(realRoot, name);
    await fs.promises.mkdir(dest, { recursive: true, mode: 0o700 });
    binds.push([prefix, dest]);
    real[name] = path.join(dest, path.relative(prefix, first));
    const targets = [...found, ...(EXTRA_COPIES[name] ?? []).map(realpathOrNull).filter((p): p is string => p !== null)];
    for (const t of targets) {
      if (covered.has(t)) continue;
      covered.add(t);
      binds.push([wrapper, t]);
    }
  }
  // The secrets helper exists only as a wrapper: it has no real program behind it.
  await fs.promises.writeFile(path.join(binDir, SECRET_HELPER), wrapperFor(SECRET_HELPER), { mode: 0o755 });
  await writeAvDtaShim(binDir, configPath);
  await fs.promises.writeFile(configPath, JSON.stringify({ url: opts.endpoint.url, token: opts.endpoint.token, socket: opts.endpoint.socket, real }), { mode: 0o600 });
  // Real prefixes must be bound before any wrapper covers a binary inside them.
  binds.sort((a, b) => Number(a[0].startsWith(binDir)) - Number(b[0].startsWith(binDir)));
  return { binDir, configPath, binds };
}

export interface SandboxSpec {
  /** Bind mounts made first ([source, target]). */
  binds: Array<[string, string]>;
  /** Paths bind-mounted read-only over themselves (forbidden files; a read-only worktree). */
  readOnly: string[];
  /** A new network namespace with only loopback. */
  isolateNet: boolean;
  /**
   * When given, the only places the session can write: every other mount is remounted
   * read-only (except /proc, /sys and /dev, which the kernel and the PTY need).
   */
  writable?: string[];
  cwd: string;
}

/** Scratch space every program expects to write to; kept writable when writes are confined. */
export const SCRATCH_DIRS = ['/tmp', '/var/tmp', '/dev/shm'];

const UNSHARE = '/usr/bin/unshare';
const SETPRIV = '/usr/bin/setpriv';
const IP_CANDIDATES = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'];

export function ipBinary(): string | null {
  return IP_CANDIDATES.find((p) => fs.existsSync(p)) ?? null;
}

/**
 * The command that starts `file args` in a private mount namespace (and, for restricted network,
 * a network namespace with only `lo`), after the binds, and with the capabilities dropped that
 * could undo them (the same set read-only sessions drop; workspace/read-only.ts says why each).
 */
export function sandboxLaunch(spec: SandboxSpec, file: string, args: string[]): { file: string; args: string[] } {
  const q = bashQuote;
  const lines = ['set -e'];
  if (spec.isolateNet) {
    const ip = ipBinary();
    if (!ip) throw new Error('restricted network needs the `ip` tool (iproute2) to bring up loopback');
    lines.push(`${q(ip)} link set lo up`);
  }
  for (const [src, dst] of spec.binds) lines.push(`mount --bind -- ${q(src)} ${q(dst)}`);
  for (const p of spec.readOnly) lines.push(`mount --bind -- ${q(p)} ${q(p)}`, `mount -o remount,bind,ro -- ${q(p)}`);
  if (spec.writable) {
    // Each writable directory becomes its own mount (recursively bound onto itself, so the binds
    // made above inside it stay), then every mount that is not exactly one of them goes
    // read-only: the root, /home, /work, … and those inner binds (the real programs' prefixes
    // under HOME, forbidden files). A mount point whose name mountinfo escapes (a space in it) is
    // left as it is (README, "Approvals, policy and secrets").
    const keep = spec.writable.map(q).join(' ');
    lines.push(
      `for w in ${keep}; do [ -d "$w" ] && mount --rbind -- "$w" "$w"; done`,
      'awk \'{print $5}\' /proc/self/mountinfo | sort -u | while IFS= read -r mp; do',
      '  case "$mp" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|*\\\\*) continue ;; esac',
      `  for w in ${keep}; do [ "$mp" = "$w" ] && continue 2; done`,
      '  mount -o remount,bind,ro -- "$mp" 2>/dev/null || true',
      'done',
    );
  }
  // The old working directory points into the mount underneath; enter it again.
  lines.push(`cd -- ${q(spec.cwd)}`);
  const caps = READ_ONLY_DROPPED_CAPS.map((c) => `-${c}`).join(',');
  lines.push(`exec ${SETPRIV} --bounding-set ${caps} --inh-caps ${caps} -- "$@"`);
  const flags = ['--mount', '--propagation', 'private', ...(spec.isolateNet ? ['--net'] : [])];
  return { file: UNSHARE, args: [...flags, '--', '/bin/sh', '-c', lines.join('\n'), 'sh', file, ...args] };
}

/**
 * The session's bash policy check, sourced by its .bashrc and (through BASH_ENV) by every
 * non-interactive bash it starts: with `extdebug`, a DEBUG trap that returns non-zero skips the
 * command, so a denylisted line never runs. Matching is done in bash (no process per command);
 * only a refusal calls the guard to report it.
 */
export function renderPolicyBash(policy: EffectivePolicy, configPath: string): string {
  const deny = policy.denylist.map((w) => q1(w.join(' '))).join(' ');
  const allow = [...policy.allowlist].map(q1).join(' ');
  const report = [process.execPath, AV_GUARD_PATH, configPath].map(bashQuote).join(' ');
  return [
    '# Agent Village policy check (generated for this session).',
    // extdebug set while bash is still starting up (BASH_ENV, .bashrc) also means "start the
    // bashdb debugger" and prints a warning on every `bash -c`; so it is switched on by the first
    // run of the trap instead, which is before the first command is decided.
    `__av_deny=(${deny})`,
    `__av_allow=(${allow})`,
    '__av_policy_check() {',
    '  shopt -q extdebug || shopt -s extdebug',
    '  local c=$BASH_COMMAND first rest norm e rule=',
    '  [[ $c == __av_* || -n ${COMP_LINE-} ]] && return 0',
    '  first=${c%%[[:space:]]*}',
    '  rest=${c:${#first}}',
    '  norm="${first##*/}$rest"',
    '  for e in "${__av_deny[@]}"; do',
    '    if [[ $norm == "$e" || $norm == "$e "* ]]; then rule="shell_denylist \\"$e\\""; break; fi',
    '  done',
    '  if [[ -z $rule && ${#__av_allow[@]} -gt 0 && $first != *=* ]]; then',
    '    local t; t=$(type -t -- "$first" 2>/dev/null)',
    '    if [[ $t == file || -z $t ]]; then',
    '      rule="shell_allowlist does not include ${first##*/}"',
    '      for e in "${__av_allow[@]}"; do [[ ${first##*/} == "$e" ]] && rule= && break; done',
    '    fi',
    '  fi',
    '  [[ -z $rule ]] && return 0',
    "  printf 'agent-village: blocked by policy: %s\\n' \"$rule\" >&2",
    `  ${report} --blocked "$rule" "$c" </dev/null >/dev/null 2>&1`,
    '  return 1',
    '}',
    'if declare -F __av_preexec >/dev/null; then trap \'__av_policy_check && __av_preexec\' DEBUG; else trap \'__av_policy_check\' DEBUG; fi',
    '',
  ].join('\n');
}

function q1(s: string): string {
  return bashQuote(s);
}

/** Recreates the protected files list: existing files of the worktree that the policy forbids writing. */
export function protectedFiles(worktree: string, files: string[], isForbidden: (rel: string) => boolean): string[] {
  return files.filter(isForbidden).slice(0, MAX_PROTECTED_FILES).map((f) => path.join(worktree, f));
}

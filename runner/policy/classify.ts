import path from 'node:path';
import { parse as parseShell } from 'shell-quote';
import type { Policy } from '../../protocol';

/**
 * The one classifier every approval mechanism uses (PATH/bind-mount shims, provider PreToolUse
 * hooks, the shell's preexec check): argv → which approval category it falls in and the policy
 * rule that matched, or null when it may run directly. Pure: the caller supplies the current
 * branch (the shim asks git in the command's cwd).
 */

export type ApprovalCategory = 'merge' | 'deps_add' | 'secrets' | 'deploy';
export const ALL_CATEGORIES: readonly ApprovalCategory[] = ['merge', 'deps_add', 'secrets', 'deploy'];
/** Branches that count as protected when the policy names none (the usual default branches). */
export const DEFAULT_PROTECTED_BRANCHES = ['main', 'master'];
/** An approval nobody answers is denied after this (policy.approval_timeout_ms overrides). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;
/** The helper program an agent calls to obtain an org secret (after approval). */
export const SECRET_HELPER = 'av-secret';

export interface Classification {
  category: ApprovalCategory;
  /** The policy rule that matched, in words. */
  rule: string;
  summary: string;
  risk: 'low' | 'medium' | 'high';
  target_branch?: string;
}

export interface EffectivePolicy {
  requiresApproval: Set<ApprovalCategory>;
  protectedBranches: string[];
  deployPatterns: string[][];
  autoMerge: boolean;
  approvalTimeoutMs: number;
  denylist: string[][];
  allowlist: Set<string>;
  forbiddenPaths: string[];
  allowedPaths: string[];
  network: 'restricted' | 'open';
  /** Hosts a restricted session may reach through the egress proxy. */
  allowHosts: string[];
  /** "Always allow this" entries: `${category}\u0000${rule}`. */
  alwaysAllow: Set<string>;
}

export function words(s: string): string[] {
  return s.trim().split(/\s+/).filter(Boolean);
}

export function effectivePolicy(p: Policy = {}): EffectivePolicy {
  return {
    requiresApproval: new Set(p.requires_approval_for ?? ALL_CATEGORIES),
    protectedBranches: p.protected_branches?.length ? p.protected_branches : DEFAULT_PROTECTED_BRANCHES,
    deployPatterns: (p.deploy_patterns ?? []).map(words).filter((w) => w.length > 0),
    autoMerge: p.auto_merge === true,
    approvalTimeoutMs: p.approval_timeout_ms ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    denylist: (p.shell_denylist ?? []).map(words).filter((w) => w.length > 0),
    allowlist: new Set((p.shell_allowlist ?? []).map((e) => words(e)[0]).filter(Boolean)),
    forbiddenPaths: p.forbidden_paths ?? [],
    allowedPaths: p.allowed_paths ?? [],
    network: p.network?.mode ?? 'open',
    allowHosts: p.network?.allow_hosts ?? [],
    alwaysAllow: new Set((p.always_allow ?? []).map((a) => `${a.category}\u0000${a.rule}`)),
  };
}

/** Does this category stop and ask under the policy? Merges into protected branches ask unless auto_merge is on. */
export function asks(policy: EffectivePolicy, category: ApprovalCategory): boolean {
  if (category === 'merge') return policy.requiresApproval.has('merge') || !policy.autoMerge;
  return policy.requiresApproval.has(category);
}

/** Does this exact kind of action (category and matching rule) stop and ask? false when an admin said "always allow this". */
export function needsAsking(policy: EffectivePolicy, c: Classification): boolean {
  return asks(policy, c.category) && !policy.alwaysAllow.has(`${c.category}\u0000${c.rule}`);
}

const base = (p: string) => path.posix.basename(p);

/** git's global options before the subcommand, and which of them take a value. */
const GIT_GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env', '--super-prefix']);

function gitSubcommand(args: string[]): { sub: string; rest: string[] } | null {
  let i = 0;
  while (i < args.length) {
    const a = args[i];
    if (GIT_GLOBAL_WITH_VALUE.has(a)) {
      i += 2;
      continue;
    }
    if (a.startsWith('-')) {
      i++;
      continue;
    }
    return { sub: a, rest: args.slice(i + 1) };
  }
  return null;
}

const stripHeads = (ref: string) => ref.replace(/^refs\/heads\//, '');

/** Where a push refspec lands: `+main`, `HEAD:main`, `src:refs/heads/main`, `:main` (delete). */
function pushDestination(spec: string, current: string | null): string | null {
  let s = spec.startsWith('+') ? spec.slice(1) : spec;
  const colon = s.indexOf(':');
  if (colon >= 0) s = s.slice(colon + 1);
  if (s === 'HEAD' || s === '@') return current;
  return s ? stripHeads(s) : null;
}

const PUSH_OPTS_WITH_VALUE = new Set(['-o', '--push-option', '--receive-pack', '--exec', '--repo']);

function classifyGit(args: string[], policy: EffectivePolicy, current: string | null): Classification | null {
  const cmd = gitSubcommand(args);
  if (!cmd) return null;
  const isProtected = (b: string | null): b is string => b !== null && policy.protectedBranches.includes(b);
  const merge = (target: string, rule: string, summary: string): Classification => ({ category: 'merge', rule, summary, risk: 'high', target_branch: target });
  if (cmd.sub === 'push') {
    const positional: string[] = [];
    let deleting = false;
    for (let i = 0; i < cmd.rest.length; i++) {
      const a = cmd.rest[i];
      if (a === '--all' || a === '--mirror' || a === '--branches') {
        const t = policy.protectedBranches[0];
        return merge(t, `push ${a} includes protected branches (${policy.protectedBranches.join(', ')})`, `git push ${a}: every branch, protected ones included`);
      }
      if (a === '--delete' || a === '-d') deleting = true;
      if (PUSH_OPTS_WITH_VALUE.has(a)) {
        i++;
        continue;
      }
      if (a.startsWith('-')) continue;
      positional.push(a);
    }
    const specs = positional.slice(1);
    // No refspec: git pushes the current branch (push.default simple/current).
    const targets = specs.length === 0 ? [current] : specs.map((s) => (deleting ? stripHeads(s) : pushDestination(s, current)));
    const hit = targets.find(isProtected);
    if (hit) return merge(hit, `push to protected branch ${hit}`, `git push to ${hit}${positional[0] ? ` on ${positional[0]}` : ''}`);
    return null;
  }
  if (cmd.sub === 'merge' || cmd.sub === 'pull') {
    // --abort / --continue finish something already approved (or undo it).
    if (cmd.rest.some((a) => a === '--abort' || a === '--quit' || a === '--continue')) return null;
    if (isProtected(current)) return merge(current, `${cmd.sub} into protected branch ${current}`, `git ${cmd.sub} into ${current}`);
  }
  return null;
}

const NPM_INSTALL = new Set(['install', 'i', 'add', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal', 'isntall']);
/** Package-manager options that take a value (so the value is not mistaken for a package). */
const PM_OPTS_WITH_VALUE = new Set(['--registry', '--prefix', '-C', '--cwd', '--dir', '--filter', '-F', '--workspace', '-w', '--tag', '--index-url', '-i', '--extra-index-url', '--target', '-t', '-c', '--constraint', '--python-version']);

function packagesIn(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (PM_OPTS_WITH_VALUE.has(a)) {
      i++;
      continue;
    }
    if (a === '-r' || a === '--requirement' || a === '-e' || a === '--editable') {
      if (args[i + 1]) out.push(`${a} ${args[i + 1]}`);
      i++;
      continue;
    }
    if (a.startsWith('-')) continue;
    out.push(a);
  }
  return out;
}

function deps(program: string, pkgs: string[]): Classification {
  return {
    category: 'deps_add',
    rule: `${program} adds dependencies`,
    summary: `${program} adds ${pkgs.slice(0, 5).join(', ')}${pkgs.length > 5 ? ` and ${pkgs.length - 5} more` : ''}`,
    risk: 'medium',
  };
}

function classifyDeps(program: string, args: string[]): Classification | null {
  const sub = args.findIndex((a) => !a.startsWith('-'));
  if (sub < 0) return null;
  const verb = args[sub];
  const rest = args.slice(sub + 1);
  if (program === 'npm' && NPM_INSTALL.has(verb)) {
    const pkgs = packagesIn(rest);
    return pkgs.length ? deps('npm', pkgs) : null;
  }
  if (program === 'pnpm' && (verb === 'add' || verb === 'install' || verb === 'i')) {
    const pkgs = packagesIn(rest);
    return pkgs.length ? deps('pnpm', pkgs) : null;
  }
  if (program === 'yarn' && verb === 'add') {
    const pkgs = packagesIn(rest);
    return pkgs.length ? deps('yarn', pkgs) : null;
  }
  if (/^pip[0-9.]*$/.test(program) && verb === 'install') {
    const pkgs = packagesIn(rest);
    return pkgs.length ? deps(program, pkgs) : null;
  }
  return null;
}

function startsWithWords(argv: string[], prefix: string[]): boolean {
  if (prefix.length > argv.length) return false;
  return prefix.every((w, i) => (i === 0 ? base(argv[0]) === base(w) : argv[i] === w));
}

/**
 * What `argv` needs before it may run. argv[0] may be a path; `current` is the branch checked
 * out where it runs (null when unknown or detached).
 */
export function classifyArgv(argv: string[], policy: EffectivePolicy, current: string | null = null): Classification | null {
  if (argv.length === 0) return null;
  const program = base(argv[0]);
  const args = argv.slice(1);
  for (const pattern of policy.deployPatterns) {
    if (startsWithWords(argv, pattern)) {
      return { category: 'deploy', rule: `deploy pattern "${pattern.join(' ')}"`, summary: `deploy: ${argv.map(base).slice(0, 1).concat(args).join(' ').slice(0, 200)}`, risk: 'high' };
    }
  }
  if (program === 'git') return classifyGit(args, policy, current);
  if (program === SECRET_HELPER && args[0]) {
    if (args[1] === '--' && args.length > 2) {
      return { category: 'secrets', rule: `secret ${args[0]} requested`, summary: `run ${args.slice(2).join(' ').slice(0, 200)} with the org secret ${args[0]}`, risk: 'high' };
    }
    return { category: 'secrets', rule: `secret ${args[0]} requested`, summary: `read the org secret ${args[0]}`, risk: 'high' };
  }
  // `python -m pip install x`
  if (/^python[0-9.]*$/.test(program) && args[0] === '-m' && /^pip[0-9.]*$/.test(args[1] ?? '')) return classifyDeps('pip', args.slice(2));
  return classifyDeps(program, args);
}

/** The denylist entry / allowlist rule that refuses argv, or null. */
export function blockedBy(argv: string[], policy: EffectivePolicy): string | null {
  if (argv.length === 0) return null;
  for (const entry of policy.denylist) if (startsWithWords(argv, entry)) return `shell_denylist "${entry.join(' ')}"`;
  if (policy.allowlist.size > 0 && !policy.allowlist.has(base(argv[0]))) return `shell_allowlist does not include ${base(argv[0])}`;
  return null;
}

// ---- shell command lines (PreToolUse Bash tool calls, typed lines) ----

/** Wrappers that run their arguments as a command. */
const PASS_THROUGH = new Set(['sudo', 'command', 'exec', 'nohup', 'time', 'nice', 'xargs', 'builtin']);
const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh']);

/**
 * Splits a command line into simple commands' argv with shell-quote (quotes, escapes, comments,
 * and every control operator — `;`, `&&`, `||`, `|`, `&`, `(`, `)`, redirections — ends a
 * command). Variables are not expanded: `$X` stays the word `$X`; a glob stays its pattern.
 */
export function splitCommandLine(line: string): string[][] {
  const out: string[][] = [];
  for (const physical of line.split('\n')) {
    let cur: string[] = [];
    const end = () => {
      if (cur.length) out.push(cur);
      cur = [];
    };
    let redirectTarget = false;
    for (const t of parseShell(physical, (key) => `$${key}`)) {
      if (typeof t === 'string') {
        if (redirectTarget) redirectTarget = false;
        else cur.push(t);
      } else if ('comment' in t) break;
      else if ('pattern' in t) cur.push(t.pattern);
      else if (t.op === '>' || t.op === '>>' || t.op === '<' || t.op === '>&' || t.op === '<(' || t.op === '>(') redirectTarget = t.op === '>' || t.op === '>>' || t.op === '<' || t.op === '>&';
      else end();
    }
    end();
  }
  const expanded: string[][] = [];
  for (const argv of out) expanded.push(...unwrap(argv));
  return expanded;
}

/** `FOO=1 env -i sudo bash -c 'git push'` → [['git', 'push']]. */
function unwrap(argv: string[]): string[][] {
  let a = argv;
  for (;;) {
    while (a.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a[0])) a = a.slice(1);
    if (!a.length) return [];
    const p = base(a[0]);
    if (p === 'env') {
      a = a.slice(1);
      while (a.length && (a[0].startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(a[0]))) a = a.slice(a[0] === '-u' ? 2 : 1);
      continue;
    }
    if (PASS_THROUGH.has(p)) {
      a = a.slice(1);
      while (a.length && a[0].startsWith('-')) a = a.slice(1);
      continue;
    }
    if (SHELLS.has(p)) {
      const c = a.findIndex((x, i) => i > 0 && /^-[a-z]*c[a-z]*$/.test(x));
      if (c > 0 && a[c + 1] !== undefined) return splitCommandLine(a[c + 1]);
    }
    return [a];
  }
}

/**
 * The first simple command of a line that needs approval. `git checkout X` / `git switch X`
 * earlier in the line moves the assumed current branch, so `git checkout main && git merge x`
 * is seen as a merge into main.
 */
export function classifyCommandLine(line: string, policy: EffectivePolicy, current: string | null = null): { argv: string[]; classification: Classification } | null {
  let branch = current;
  for (const argv of splitCommandLine(line)) {
    const c = classifyArgv(argv, policy, branch);
    if (c) return { argv, classification: c };
    if (base(argv[0]) === 'git') {
      const sub = gitSubcommand(argv.slice(1));
      if (sub && (sub.sub === 'checkout' || sub.sub === 'switch')) {
        const target = sub.rest.filter((x) => !x.startsWith('-'))[0];
        if (target && !sub.rest.includes('--')) branch = target;
      }
    }
  }
  return null;
}

/** The first simple command of a line the shell lists refuse. */
export function blockedCommandLine(line: string, policy: EffectivePolicy): { argv: string[]; rule: string } | null {
  for (const argv of splitCommandLine(line)) {
    const rule = blockedBy(argv, policy);
    if (rule) return { argv, rule };
  }
  return null;
}

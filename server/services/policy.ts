import type { Policy } from '../../protocol';
import { describeZodError, PolicySchema } from '../../protocol';
import type { Db } from '../db';
import { requireRole, type Principal } from './auth';
import { AppError, notFound } from './errors';

/** Hosts a session reaches when nobody said otherwise: registries, the git hosts, the providers' APIs. */
export const DEFAULT_ALLOW_HOSTS = [
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  'pypi.org',
  'files.pythonhosted.org',
  'github.com',
  'codeload.github.com',
  'objects.githubusercontent.com',
  'gitlab.com',
  'api.anthropic.com',
  'api.openai.com',
  'chatgpt.com',
  'generativelanguage.googleapis.com',
  'oauth2.googleapis.com',
];

/**
 * What a session gets when its org and repository say nothing: every risky category asks,
 * main/master are protected, nothing auto-merges, an unanswered approval is denied in 10 min.
 */
export const DEFAULT_POLICY: Required<Pick<Policy, 'requires_approval_for' | 'protected_branches' | 'auto_merge' | 'approval_timeout_ms' | 'network'>> &
  Policy = {
  shell_denylist: ['rm -rf /', 'curl http://', 'scp', 'ssh'],
  requires_approval_for: ['merge', 'deps_add', 'secrets', 'deploy'],
  protected_branches: ['main', 'master'],
  deploy_patterns: ['kubectl apply', 'terraform apply', 'npm publish', 'helm upgrade'],
  auto_merge: false,
  approval_timeout_ms: 10 * 60_000,
  // Egress closed by default: the package registries and the agent CLIs' APIs only (README, "Threat model").
  network: { mode: 'restricted', allow_hosts: DEFAULT_ALLOW_HOSTS },
};

/** Extra checks zod cannot express, with messages a person can act on. */
function checkPolicy(p: Policy): string | null {
  const allow = new Set(p.shell_allowlist ?? []);
  const clash = (p.shell_denylist ?? []).find((d) => allow.has(d));
  if (clash) return `"${clash}" is both allowed and denied.`;
  for (const g of [...(p.forbidden_paths ?? []), ...(p.allowed_paths ?? [])]) {
    if (g.startsWith('/') || g.split('/').includes('..')) return `Path rule "${g}" must be relative to the repository and stay inside it.`;
  }
  return null;
}

/** Parse a policy from a person or the database: a clear error, nothing saved, when it is bad. */
export function parsePolicy(input: unknown): Policy {
  const parsed = PolicySchema.safeParse(input);
  if (!parsed.success) throw new AppError('BAD_REQUEST', `The policy is not valid: ${describeZodError(parsed.error)}`);
  const problem = checkPolicy(parsed.data);
  if (problem) throw new AppError('BAD_REQUEST', `The policy is not valid: ${problem}`);
  return parsed.data;
}

/** Later layers override earlier ones field by field (a repository can tighten or loosen a list). */
export function mergePolicies(...layers: Policy[]): Policy {
  return Object.assign({}, ...layers.map((l) => Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined))));
}

/**
 * The repository's network settings replace the org's like any field, except that when both name
 * allowed hosts the repository adds to the org's list (an org-wide registry plus this repo's host).
 */
export function withAllowHostsUnion(merged: Policy, org: Policy, repo: Policy): Policy {
  const a = org.network?.allow_hosts;
  const b = repo.network?.allow_hosts;
  if (!a || !b || !merged.network) return merged;
  return { ...merged, network: { ...merged.network, allow_hosts: [...new Set([...a, ...b])] } };
}

export function createPolicyService(db: Db, record: (r: { orgId: string; actor: string; action: string; target?: string; detail?: Record<string, unknown> }) => Promise<void>) {
  return {
    async getOrg(orgId: string): Promise<Policy> {
      const org = await db.org.findUnique({ where: { id: orgId }, select: { policy: true } });
      if (!org) throw notFound('That organisation');
      return PolicySchema.parse(JSON.parse(org.policy));
    },

    async getRepo(orgId: string, repoId: string): Promise<Policy> {
      const repo = await db.repo.findFirst({ where: { id: repoId, orgId }, select: { policy: true } });
      if (!repo) throw notFound('That repository');
      return PolicySchema.parse(JSON.parse(repo.policy));
    },

    /** The policy a new session in this repository runs under. */
    async effective(orgId: string, repoId: string): Promise<Policy> {
      const org = await this.getOrg(orgId);
      const repo = await this.getRepo(orgId, repoId);
      return withAllowHostsUnion(mergePolicies(DEFAULT_POLICY, org, repo), org, repo);
    },

    async setOrg(p: Principal, input: unknown): Promise<Policy> {
      requireRole(p, 'admin');
      const policy = parsePolicy(input);
      await db.org.update({ where: { id: p.orgId }, data: { policy: JSON.stringify(policy) } });
      await record({ orgId: p.orgId, actor: p.email, action: 'policy.changed', target: 'org', detail: { policy } });
      return policy;
    },

    async setRepo(p: Principal, repoId: string, input: unknown): Promise<Policy> {
      requireRole(p, 'admin');
      const policy = parsePolicy(input);
      const res = await db.repo.updateMany({ where: { id: repoId, orgId: p.orgId }, data: { policy: JSON.stringify(policy) } });
      if (res.count === 0) throw notFound('That repository');
      await record({ orgId: p.orgId, actor: p.email, action: 'policy.changed', target: repoId, detail: { policy } });
      return policy;
    },
  };
}

export type PolicyService = ReturnType<typeof createPolicyService>;

import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { DTA_LIMITS, DTA_TOOLS, DtaToolSchema, type DtaInvocation } from '../../protocol';

/**
 * What a DTA run may do (deterministic-tool-adapters.md "Policy & Safety"): approved tools only,
 * changes only under allowed paths, a ceiling on files and time, and a rate limit per repository
 * that every process on the machine shares (it lives in the repository's git dir).
 */

/** Enough for a planner stepping through a plan, too few for a runaway loop. */
export const DEFAULT_RATE_LIMIT = { max_runs: 60, window_ms: 60_000 } as const;

export const DtaPolicySchema = z.object({
  approved_tools: z.array(DtaToolSchema).default([...DTA_TOOLS]),
  /** Globs (relative to the top level) a run may change; default everything tracked. */
  allowed_paths: z.array(z.string().min(1)).min(1).default(['**']),
  max_files: z.number().int().min(1).max(DTA_LIMITS.MAX_FILES).default(DTA_LIMITS.DEFAULT_MAX_FILES),
  timeout_ms: z.number().int().min(100).max(DTA_LIMITS.MAX_TIMEOUT_MS).default(DTA_LIMITS.DEFAULT_TIMEOUT_MS),
  rate_limit: z.object({ max_runs: z.number().int().min(1), window_ms: z.number().int().min(1000) }).default({ ...DEFAULT_RATE_LIMIT }),
  /** Dry-run → approval → apply for runs through the control plane (per org/repo policy). */
  gate_required: z.boolean().default(true),
});
export type DtaPolicy = z.infer<typeof DtaPolicySchema>;

export const DEFAULT_POLICY: DtaPolicy = DtaPolicySchema.parse({});

/** `AV_DTA_POLICY`: a JSON file with a policy (the runner writes one per session). */
export const POLICY_ENV = 'AV_DTA_POLICY';

export function loadPolicy(env: NodeJS.ProcessEnv = process.env): DtaPolicy {
  const file = env[POLICY_ENV];
  if (!file) return DEFAULT_POLICY;
  const parsed = DtaPolicySchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${POLICY_ENV} (${file}) is not a DTA policy: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export class PolicyError extends Error {}

/** The invocation's own constraints, capped by the policy. */
export function effectiveConstraints(inv: DtaInvocation, policy: DtaPolicy): DtaInvocation['constraints'] {
  if (!policy.approved_tools.includes(inv.tool)) throw new PolicyError(`${inv.tool} is not an approved DTA here (approved: ${policy.approved_tools.join(', ') || 'none'})`);
  return { ...inv.constraints, max_files: Math.min(inv.constraints.max_files, policy.max_files), timeout_ms: Math.min(inv.constraints.timeout_ms, policy.timeout_ms) };
}

export function allowedPathMatcher(policy: DtaPolicy): (rel: string) => boolean {
  return picomatch(policy.allowed_paths, { dot: true });
}

/** Refuses the run when the repository had max_runs runs in the window; records it otherwise. */
export function takeRateSlot(stateDir: string, policy: DtaPolicy, now = Date.now()): void {
  fs.mkdirSync(stateDir, { recursive: true });
  const file = path.join(stateDir, 'rate.json');
  let stamps: number[] = [];
  try {
    stamps = z.array(z.number()).parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    stamps = [];
  }
  stamps = stamps.filter((t) => t > now - policy.rate_limit.window_ms);
  if (stamps.length >= policy.rate_limit.max_runs) {
    throw new PolicyError(`rate limit: ${policy.rate_limit.max_runs} DTA runs per ${policy.rate_limit.window_ms / 1000} s on this repository; try again later`);
  }
  stamps.push(now);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(stamps));
  fs.renameSync(tmp, file);
}

import { QuestPlanSchema, type Skill } from '../../protocol';
import type { Db } from '../db';
import { BLUEPRINT_SKILL_PREFIX, buildManifest } from '../planner/skills';
import { AppError } from './errors';
import type { RunnerGateway } from './ports';
import { canReach } from './repos';

/**
 * Where a quest's skills come from and which runner runs it: the manifest a planner may use (the
 * org's agent providers and the blueprints its runners registered), and a runner that can reach
 * the repository and — when the plan has blueprint steps — owns every one of those blueprints
 * (blueprints are bound to the runner that registered them).
 */

/** The skill manifest for a quest of this org: DTAs, gate, test, its runners' providers and blueprints. */
export async function questManifest(db: Db, orgId: string, agentProvider?: string): Promise<Skill[]> {
  const runners = await db.runner.findMany({ where: { orgId }, select: { providers: true } });
  const providers = [...new Set(runners.flatMap((r) => JSON.parse(r.providers) as string[]))].filter((x) => x !== 'shell');
  const rows = await db.blueprint.findMany({ where: { orgId }, select: { name: true, description: true, parametersSchema: true }, orderBy: { name: 'asc' } });
  const seen = new Set<string>();
  const blueprints = rows
    .filter((b) => !seen.has(b.name) && seen.add(b.name))
    .map((b) => ({ name: b.name, summary: b.description, params_schema: JSON.parse(b.parametersSchema) as Record<string, unknown> }));
  return buildManifest({ providers: agentProvider ? [agentProvider] : providers, blueprints });
}

/** The blueprints a stored plan names (blueprint.<name> steps). */
export function planBlueprints(planJson: string): string[] {
  const plan = QuestPlanSchema.parse(JSON.parse(planJson));
  return [...new Set(plan.steps.filter((s) => s.skill.startsWith(BLUEPRINT_SKILL_PREFIX)).map((s) => s.skill.slice(BLUEPRINT_SKILL_PREFIX.length)))].sort();
}

/** The runner a quest runs on, or a clear NO_RUNNER error saying what is missing. */
export async function pickQuestRunner(db: Db, gateway: RunnerGateway, q: { orgId: string; plan: string }, repoSource: string): Promise<{ id: string; name: string }> {
  const online = (await db.runner.findMany({ where: { orgId: q.orgId, online: true }, orderBy: { name: 'asc' } })).filter((r) => gateway.isOnline(r.id));
  if (!online.length) throw new AppError('NO_RUNNER', 'No runner is online. Start one (see Settings → Runner tokens).');
  const reaching = online.filter((r) => canReach(JSON.parse(r.repoAccess) as string[], repoSource));
  if (!reaching.length) throw new AppError('NO_RUNNER', 'No online runner can reach this repository (runner repo access rules).');
  const needs = planBlueprints(q.plan);
  if (!needs.length) return reaching[0]!;
  const owned = await db.blueprint.findMany({ where: { orgId: q.orgId, name: { in: needs }, runnerId: { in: reaching.map((r) => r.id) } }, select: { runnerId: true, name: true } });
  const runner = reaching.find((r) => needs.every((n) => owned.some((b) => b.runnerId === r.id && b.name === n)));
  if (!runner) throw new AppError('NO_RUNNER', `No online runner that can reach this repository has the blueprint${needs.length > 1 ? 's' : ''} ${needs.join(', ')}.`);
  return runner;
}

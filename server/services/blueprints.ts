import type { AgentCatalog, Blueprint, BlueprintProblem, DeterministicAgent } from '../../protocol';
import type { Db } from '../db';
import { AppError } from './errors';
import { newId } from './ids';
import type { Broadcaster, RunnerGateway } from './ports';

type BlueprintRow = {
  id: string;
  name: string;
  description: string;
  command: string;
  parametersSchema: string;
  timeoutSeconds: number;
  runnerId: string;
  runner: { name: string; online: boolean };
};

/**
 * Deterministic agents: the blueprints each runner registered, bound to that runner (type
 * "procedural"). Replaced whenever the runner registers or its folder changes, deleted when it
 * disconnects — so only a connected runner's agents are ever listed or run.
 */
export function createBlueprintService(db: Db, gateway: () => RunnerGateway, broadcast: () => Broadcaster) {
  function agent(r: BlueprintRow): DeterministicAgent {
    return {
      name: r.name,
      type: 'procedural',
      description: r.description,
      command: r.command,
      parameters_schema: JSON.parse(r.parametersSchema) as Record<string, unknown>,
      timeout_seconds: r.timeoutSeconds,
      runner_id: r.runnerId,
      runner_name: r.runner.name,
      runner_online: r.runner.online && gateway().isOnline(r.runnerId),
    };
  }

  async function catalog(orgId: string): Promise<AgentCatalog> {
    const [rows, problems] = await Promise.all([
      db.blueprint.findMany({ where: { orgId }, include: { runner: { select: { name: true, online: true } } }, orderBy: [{ name: 'asc' }, { runner: { name: 'asc' } }] }),
      db.blueprintProblem.findMany({ where: { orgId }, include: { runner: { select: { name: true } } }, orderBy: [{ runnerId: 'asc' }, { file: 'asc' }] }),
    ]);
    return {
      agents: rows.map(agent),
      problems: problems.map((p) => ({ file: p.file, reason: p.reason, runner_id: p.runnerId, runner_name: p.runner.name })),
    };
  }

  async function publish(orgId: string) {
    broadcast().agentsUpdated(orgId, await catalog(orgId));
  }

  return {
    catalog,
    publish,

    /** What a runner offers now (register or `runner:blueprints`): replaces what it offered before. */
    async replace(runner: { id: string; orgId: string }, blueprints: Blueprint[], problems: BlueprintProblem[]): Promise<number> {
      await db.$transaction([
        db.blueprint.deleteMany({ where: { runnerId: runner.id } }),
        db.blueprintProblem.deleteMany({ where: { runnerId: runner.id } }),
        db.blueprint.createMany({
          data: blueprints.map((b) => ({
            id: newId('bp'),
            orgId: runner.orgId,
            runnerId: runner.id,
            name: b.name,
            type: 'procedural',
            description: b.description,
            command: b.command,
            parametersSchema: JSON.stringify(b.parameters_schema),
            timeoutSeconds: b.timeout_seconds,
          })),
        }),
        db.blueprintProblem.createMany({
          data: problems.map((p) => ({ id: newId('bp'), orgId: runner.orgId, runnerId: runner.id, file: p.file, reason: p.reason })),
        }),
      ]);
      await publish(runner.orgId);
      return blueprints.length;
    },

    /** The runner disconnected: its agents go with it (they come back when it registers again). */
    async dropRunner(runnerId: string, orgId: string) {
      await db.$transaction([db.blueprint.deleteMany({ where: { runnerId } }), db.blueprintProblem.deleteMany({ where: { runnerId } })]);
      await publish(orgId);
    },

    /** Control-plane start: no runner is connected yet, so no agent is offered. */
    async dropAll() {
      await db.$transaction([db.blueprint.deleteMany({}), db.blueprintProblem.deleteMany({})]);
    },

    /**
     * The blueprint a run goes to: by name within the org, on a connected runner. Two runners
     * offering the same name need `runnerId` to say which.
     */
    async resolve(orgId: string, name: string, runnerId?: string) {
      const rows = (
        await db.blueprint.findMany({
          where: { orgId, name, ...(runnerId ? { runnerId } : {}) },
          include: { runner: { select: { name: true, online: true } } },
          orderBy: { runnerId: 'asc' },
        })
      ).filter((r) => gateway().isOnline(r.runnerId));
      if (rows.length === 0) {
        throw new AppError('NOT_FOUND', `No deterministic agent named "${name}" is available${runnerId ? ' on that runner' : ''} (its runner may be offline).`);
      }
      if (rows.length > 1) {
        throw new AppError(
          'CONFLICT',
          `"${name}" is offered by ${rows.length} runners (${rows.map((r) => r.runner.name).join(', ')}); say which with runner_id.`,
        );
      }
      return rows[0]!;
    },
  };
}

export type BlueprintService = ReturnType<typeof createBlueprintService>;

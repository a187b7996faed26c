import type { Db } from '../db';
import { createAuthService } from './auth';
import { createEventService } from './events';
import type { Broadcaster, RunnerGateway } from './ports';
import { createRepoService } from './repos';
import { createRunnerService, DEFAULT_RUNNER_GRACE_MS } from './runners';
import { createSessionService } from './sessions';

export interface Ports {
  gateway: RunnerGateway;
  broadcast: Broadcaster;
}

/** All domain services over one database; the realtime layer plugs its ports in after creation. */
export function createServices(db: Db, orgId: string, opts: { runnerGraceMs: number } = { runnerGraceMs: DEFAULT_RUNNER_GRACE_MS }) {
  const ports: Partial<Ports> = {};
  const gateway = () => ports.gateway ?? missing('gateway');
  const broadcast = () => ports.broadcast ?? missing('broadcast');
  const sessions = createSessionService(db, gateway, broadcast);
  return {
    db,
    /** The installation's org (one per installation until orgs can be created). */
    orgId,
    ports,
    auth: createAuthService(db),
    runners: createRunnerService(db, gateway, broadcast, (o, id) => sessions.publish(o, id), { graceMs: opts.runnerGraceMs }),
    repos: createRepoService(db, gateway, broadcast),
    sessions,
    events: createEventService(db, () => sessions, gateway, broadcast),
  };
}

function missing(name: string): never {
  throw new Error(`services used before the realtime layer provided ${name}`);
}

export type Services = ReturnType<typeof createServices>;

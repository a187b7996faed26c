import type { Db } from '../db';
import { createAuditService } from './audit';
import { createAuthService } from './auth';
import { createEventService } from './events';
import { MemberEvents } from './member-events';
import { createMemberService } from './members';
import type { Broadcaster, RunnerGateway } from './ports';
import { createRepoService } from './repos';
import { createRunnerService, DEFAULT_RUNNER_GRACE_MS } from './runners';
import { createSessionService } from './sessions';
import { createApprovalService } from './approvals';
import { createPolicyService } from './policy';
import { createSecretService } from './secrets';
import { createBlueprintService } from './blueprints';
import { createRunService } from './runs';

export interface Ports {
  gateway: RunnerGateway;
  broadcast: Broadcaster;
}

/** All domain services over one database; the realtime layer plugs its ports in after creation. */
export function createServices(
  db: Db,
  orgId: string,
  opts: { runnerGraceMs?: number; secretKey: Buffer },
) {
  const ports: Partial<Ports> = {};
  const gateway = () => ports.gateway ?? missing('gateway');
  const broadcast = () => ports.broadcast ?? missing('broadcast');
  const audit = createAuditService(db);
  const record = (r: Parameters<typeof audit.record>[0]) => audit.record(r);
  const policy = createPolicyService(db, record as never);
  const secrets = createSecretService(db, opts.secretKey, record as never);
  const sessions = createSessionService(db, gateway, broadcast, { policy, secrets });
  const approvals = createApprovalService(db, gateway, broadcast, () => record as never);
  const memberEvents = new MemberEvents();
  const auth = createAuthService(db, audit, memberEvents);
  const blueprints = createBlueprintService(db, gateway, broadcast);
  const runs = createRunService(db, gateway, broadcast, { blueprints, audit });
  return {
    db,
    /** The installation's org (one per installation until orgs can be created). */
    orgId,
    ports,
    auth,
    /** `audit.record({ orgId, actor, action, target, detail })`: the one way to write the audit log. */
    audit,
    members: createMemberService(db, auth, audit, memberEvents),
    /** Role changes and removals, for the realtime layer to apply to open sockets at once. */
    memberEvents,
    policy,
    secrets,
    approvals,
    runners: createRunnerService(db, gateway, broadcast, (o, id) => sessions.publish(o, id), {
      graceMs: opts.runnerGraceMs ?? DEFAULT_RUNNER_GRACE_MS,
      audit,
      runs,
    }),
    /** Deterministic agents: blueprints bound to their runners, and their runs. */
    blueprints,
    runs,
    repos: createRepoService(db, gateway, broadcast),
    sessions,
    events: createEventService(db, () => sessions, gateway, broadcast, approvals),
  };
}

function missing(name: string): never {
  throw new Error(`services used before the realtime layer provided ${name}`);
}

export type Services = ReturnType<typeof createServices>;

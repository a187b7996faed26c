import type { Db } from '../db';
import { createAuditService } from './audit';
import { createAuthService } from './auth';
import type { LoginThrottle } from './login-throttle';
import { createEventService } from './events';
import { MemberEvents } from './member-events';
import { createMemberService } from './members';
import type { Broadcaster, PatrolScheduler, RunnerGateway } from './ports';
import { createRepoService } from './repos';
import { createRunnerService, DEFAULT_RUNNER_GRACE_MS } from './runners';
import { createSessionService } from './sessions';
import { createSessionStateService } from './session-state';
import { createApprovalService } from './approvals';
import { createPolicyService } from './policy';
import { createSecretService } from './secrets';
import { createPlanService } from './plans';
import { createUsageService } from './usage';
import { createBillingService } from './billing';
import { createLimitService } from './limits';
import { createWriterQueue } from './writer-queue';
import { createTerminalScreens, type TerminalScreensOptions } from './terminal/screens';
import { createSegmentStore, pruningIngest } from './terminal/segments';
import { type PlanId } from '../../protocol';
import { periodOf } from '../../common/period';
import { createAlertService } from './alerts';
import { createPatrolService } from './patrols';
import { createWebhookService } from './webhooks';
import { createBlueprintService } from './blueprints';
import { createRunService } from './runs';
import { createRedactionService, redactingIngest } from './redaction';
import { createDtaRunService } from './dta-runs';
import { createNotificationParts } from './notifications-wiring';
import { notifyingIngest } from './notifications';
import type { DeliveryOptions } from './outgoing-webhooks';
import { createQuestService } from './quests';
import { errorText } from '../../common/error-text';
import { createRadarService } from './radar';
import { createStoryService } from './stories';
import { createLeaseService, defaultNodeId } from './leases';

export interface Ports {
  gateway: RunnerGateway;
  broadcast: Broadcaster;
  /** server/scheduler: in-process (croner) or BullMQ, plugged in after the realtime layer. */
  scheduler: PatrolScheduler;
}

/** All domain services over one database; the realtime layer plugs its ports in after creation. */
export function createServices(
  db: Db,
  orgId: string,
  opts: {
    runnerGraceMs?: number;
    secretKey: Buffer;
    defaultPlan?: PlanId;
    loginThrottle?: LoginThrottle;
    allowPrivateGitHosts?: boolean;
    /** Where links in notifications and webhooks point (PUBLIC_URL, else the local port). */
    publicOrigin?: () => string;
    /** Outgoing webhooks' retry schedule (tests: no real waits). */
    webhookDelivery?: DeliveryOptions;
    /** Allows of one kind before "always allow this" is offered. */
    allowsBeforeSuggesting?: number;
    terminal?: TerminalScreensOptions;
    /** This control-plane node's name in leases (several nodes share one database). */
    nodeId?: string;
  },
) {
  const ports: Partial<Ports> = {};
  const gateway = () => ports.gateway ?? missing('gateway');
  const broadcast = () => ports.broadcast ?? missing('broadcast');
  const scheduler = () => ports.scheduler ?? missing('scheduler');
  const audit = createAuditService(db);
  const record = (r: Parameters<typeof audit.record>[0]) => audit.record(r);
  const policy = createPolicyService(db, record as never);
  const secrets = createSecretService(db, opts.secretKey, record as never);
  const plans = createPlanService(db, audit, { defaultPlan: opts.defaultPlan ?? 'free' });
  const writer = createWriterQueue();
  /** Retention of the ~64 KB terminal output segments ingest writes (issue 17). */
  const terminalSegments = createSegmentStore(db, writer, { retainChars: opts.terminal?.retainChars });
  const leases = createLeaseService(db, opts.nodeId ?? defaultNodeId());
  const usage = createUsageService(db, writer);
  const limits = createLimitService(db, plans, usage, gateway, audit, leases);
  // Every server-side write of a session's state goes through its lifecycle check.
  const states = createSessionStateService(db, audit);
  const sessions = createSessionService(db, gateway, broadcast, { policy, secrets, limits, states });
  // DTA runs (dry-run → gate → apply → verify) decide their own approval cards; created below.
  let dtaRuns: ReturnType<typeof createDtaRunService> | null = null;
  // Notifications, org webhooks, one-time approval links, policy suggestions (issue 19 items 2–3).
  const notify = createNotificationParts(db, { ...opts, audit, leases, policy, broadcast, approvals: () => approvals });
  const approvals = createApprovalService(db, gateway, broadcast, () => record as never, (orgId, repoId) => policy.effective(orgId, repoId), () => dtaRuns!, () => notify.suggestions);
  const memberEvents = new MemberEvents();
  const auth = createAuthService(db, audit, memberEvents, opts.loginThrottle);
  const repos = createRepoService(db, gateway, broadcast, { allowPrivateGitHosts: opts.allowPrivateGitHosts });
  const alerts = createAlertService(db, broadcast);
  let webhooks: ReturnType<typeof createWebhookService> | null = null;
  const patrols = createPatrolService(db, {
    gateway,
    broadcast,
    scheduler,
    sessions,
    repos,
    alerts,
    audit,
    ensureWebhook: (orgId, repoId) => webhooks!.ensure(orgId, repoId),
    scheduleLimit: async (orgId) => {
      const plan = await plans.planFor(orgId, periodOf(Date.now()));
      return { plan: plan.name, max: plan.patrol_schedules };
    },
  });
  webhooks = createWebhookService(db, opts.secretKey, { patrols: () => patrols, repos, audit });
  const blueprints = createBlueprintService(db, gateway, broadcast);
  // Quests: planner + work items on runners (server/services/quests.ts); their updates share the runs' channel.
  const quests = createQuestService(db, gateway, { audit, broadcast });
  // A failed quest step tells the people who can act on it (inbox, browser, org webhooks).
  quests.onStepFailed((e) => {
    void notify.notifications
      .questStepFailed(e.org_id, { questId: e.quest_id, stepId: e.step_id, title: `${e.skill} (${e.step_id})`, message: e.reason || e.status, userId: null })
      .catch((err: unknown) => console.error(`[notify] quest step failure not delivered: ${errorText(err)}`));
  });
  const runs = createRunService(db, gateway, broadcast, { blueprints, audit, dta: () => dtaRuns!, quests: () => quests });
  dtaRuns = createDtaRunService(db, gateway, broadcast, { audit, policyOf: (o, r) => policy.effective(o, r) });
  // The control plane redacts every runner event again before storing or broadcasting it (issue 10).
  const redaction = createRedactionService(db, (o) => secrets.forSession(o), audit);
  // No `db` here: the database is reached only through these services' functions (issue 14 item 4).
  return {
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
    /** Leases in the database shared by every node: runner ownership, cross-node locks. */
    leases,
    runners: createRunnerService(db, gateway, broadcast, (o, id) => sessions.publish(o, id), {
      graceMs: opts.runnerGraceMs ?? DEFAULT_RUNNER_GRACE_MS,
      audit,
      runs,
      leases,
      failSessions: (o, ids, reason) => states.transition(o, ids, 'FAILED', reason),
    }),
    repos,
    /** Deterministic agents: blueprints bound to their runners, and their runs. */
    blueprints,
    runs,
    /** Deterministic tool adapters run through the control plane: gate, soft locks, verified results. */
    dtaRuns,
    /** Quests: a goal → a validated plan → atomic, receipted work items (server/planner/, runner/workitems/). */
    quests,
    sessions,
    redaction,
    ...notify,
    /** Headless mirrors of session terminals: attach from a screen, snapshots, time-travel seek. */
    terminalScreens: createTerminalScreens(db, writer, opts.terminal),
    terminalSegments,
    events: redactingIngest(notifyingIngest(pruningIngest(createEventService(
      db,
      () => sessions,
      gateway,
      broadcast,
      approvals,
      { stored: (ticks) => usage.noteStored(ticks), after: (orgId, ticks) => limits.afterTicks(orgId, ticks) },
      writer,
      () => patrols,
      states,
    ), terminalSegments), () => notify.notifications), redaction),
    /** Plans as data (installation admin edits terms; org admins pick one from the next period). */
    plans,
    /** Figures from the stored USAGE_TICKs. */
    usage,
    /** Spawn admission and the hard cap. */
    limits,
    /** Statements, invoices at rollover, plan changes. */
    billing: createBillingService(db, plans, usage),
    /** Repository patrols: configuration, runs, dispatch to runners, results. */
    patrols,
    /** Alerts from patrols (bug sprites) and each building's health. */
    alerts,
    /** Signed push deliveries (GitHub's format) that run a repository's patrols. */
    webhooks,
    /** Conflict radar: overlapping live sessions and DTA runs, their hunks and merge preview (issue 19). */
    radar: createRadarService(db, gateway, (o) => secrets.forSession(o)),
    /** One-page summaries of ended sessions, and the history of sessions per room and building (issue 19). */
    stories: createStoryService(db, { receipt: (p, id) => redaction.receipt(p, id) }),
  };
}

function missing(name: string): never {
  throw new Error(`services used before the realtime layer provided ${name}`);
}

export type Services = ReturnType<typeof createServices>;

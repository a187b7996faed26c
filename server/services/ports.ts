import type { AgentCatalog, DtaRunUpdated, QuestUpdated, AlertSummary, ApprovalSummary, NotificationSummary, PatrolRunSummary, PatrolSummary, RepoHealth, RepoSummary, Result, RunSummary, RunnerSummary, ServerToRunnerEvents, SessionSummary, WireEvent } from '../../protocol';

type CommandName = keyof ServerToRunnerEvents;
type CommandBody<K extends CommandName> = Parameters<ServerToRunnerEvents[K]>[0];
type CommandData<K extends CommandName> = Parameters<ServerToRunnerEvents[K]>[1] extends (r: Result<infer T>) => void ? T : never;

/** How services reach runners; implemented by the realtime layer over each runner's socket. */
export interface RunnerGateway {
  isOnline(runnerId: string): boolean;
  activeSessions(runnerId: string): number;
  /** The latest health figures a runner reported in its heartbeat. */
  health(runnerId: string): { event_loop_lag_ms: number | null; rss_bytes: number | null };
  command<K extends CommandName>(runnerId: string, name: K, body: CommandBody<K>): Promise<Result<CommandData<K>>>;
  notify(runnerId: string, name: 'terminal:ack', body: CommandBody<'terminal:ack'>): void;
  /** Disconnect every runner that authenticated with this token (it was revoked). */
  dropToken(tokenId: string): void;
}

/** How services tell browsers about changes; implemented by the /ui namespace. */
export interface Broadcaster {
  sessionUpdated(orgId: string, session: SessionSummary): void;
  repoUpdated(orgId: string, repo: RepoSummary): void;
  runnerUpdated(orgId: string, runner: RunnerSummary): void;
  approvalUpdated(orgId: string, approval: ApprovalSummary): void;
  /** A new inbox entry, to that user's browsers only. */
  notificationCreated(userId: string, notification: NotificationSummary): void;
  alertUpdated(orgId: string, alert: AlertSummary): void;
  healthUpdated(orgId: string, health: RepoHealth): void;
  patrolUpdated(orgId: string, patrol: PatrolSummary): void;
  patrolRunUpdated(orgId: string, run: PatrolRunSummary): void;
  runUpdated(orgId: string, run: RunSummary): void;
  dtaRunUpdated(orgId: string, run: DtaRunUpdated): void;
  /** A quest or one of its steps changed state (quest banner, step workers, the quest board). */
  questUpdated(orgId: string, quest: QuestUpdated): void;
  agentsUpdated(orgId: string, catalog: AgentCatalog): void;
  /** `utf8`: the UTF-8 of some of the chunks by seq, as the runner sent it (the text is encoded for the others). */
  sessionEvents(sessionId: string, events: WireEvent[], utf8?: ReadonlyMap<number, Uint8Array>): void;
  /** Whether any browser is attached to the session (flow control is theirs then). */
  hasViewers(sessionId: string): boolean;
}

/** A run that should happen: a new one (a scheduled tick) or one already recorded (manual, webhook). */
export type PatrolJob = { kind: 'tick'; patrolId: string; key: string } | { kind: 'run'; runId: string };

/**
 * Where patrol runs wait (server/scheduler): in-process (croner, runs at once) or BullMQ queues
 * when REDIS_URL is set (retries, a dead-letter queue, one run per job across control-plane nodes).
 */
export interface PatrolScheduler {
  readonly mode: 'in-process' | 'bullmq';
  /** The patrol's schedule changed (or it was enabled, disabled, created, deleted). */
  sync(patrol: { id: string; schedule: string; enabled: boolean; command: string } | { id: string; deleted: true }): Promise<void>;
  enqueue(job: PatrolJob): Promise<void>;
  close(): Promise<void>;
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ProviderId, RunnerRegister } from '../protocol';
import { createCommandHandlers, type CommandHandlers } from './commands';
import type { RunnerConfig } from './config';
import { RunnerConnection } from './connection';
import { startHttpServer, type RunnerHttpServer } from './http/listener';
import { createStderrLogger, type Logger } from './log';
import { HookServer } from './hooks';
import { defaultProviders, detectAll, type ProviderAdapter } from './providers';
import { SessionManager } from './sessions/session-manager';
import { EventSender } from './spool/sender';
import { Spool } from './spool/spool';
import { RUNNER_VERSION } from './version';
import { probeReadOnlyPrevention } from './workspace/read-only';
import { ApprovalJournal } from './approvals/journal';
import { createRepoAccess } from '../common/repo-access';
import { WorkspaceManager } from './workspace/workspace-manager';
import { BlueprintCatalog } from './blueprints/catalog';
import { setVerifierMemoDir } from './dta/engine';
import { DtaRunService } from './dta/run-service';
import { createWorkItemService } from './workitems/wiring';
import { RunManager } from './runs/run-manager';
import { parseSandboxEnv, setUpSandbox } from './sandbox/settings';
import type { SandboxSupport } from './sandbox';
import { errorText } from '../common/error-text';

/** On shutdown, give the final state changes this long to reach the server; the spool keeps the rest. */
export const SHUTDOWN_DRAIN_MS = 2_000;
/** RunnerRegisterSchema's limit on reported sessions. */
const MAX_REPORTED_SESSIONS = 1000;

export interface StartRunnerOptions {
  log?: Logger;
  /** Adapters to detect; defaults to every adapter the runner ships. */
  providers?: ProviderAdapter[];
  /** The control plane refused the token. Defaults to logging; index.ts exits 3. */
  onUnauthorized?: (message: string) => void;
  /** Tests: force the read-only mount on or off instead of probing for it. */
  readOnlyPrevention?: boolean;
  /** Tests: force the guard namespace on or off (defaults to what the read-only probe found). */
  guardNamespace?: boolean;
  /** Tests: a sandbox found already (or NO_SANDBOX) instead of probing; production probes (runner/sandbox/settings.ts). */
  sandbox?: SandboxSupport;
  /** The environment the sandbox settings are read from (default process.env). */
  env?: Record<string, string | undefined>;
}

/** What startRunner needs; the newer options may be left out by callers that build a config by hand. */
export type StartRunnerConfig = Omit<RunnerConfig, 'labels' | 'repo_access' | 'listen' | 'blueprints_dir' | 'provider_auth' | 'insecure' | 'ca' | 'cert' | 'key'> &
  Partial<Pick<RunnerConfig, 'labels' | 'repo_access' | 'listen' | 'blueprints_dir' | 'provider_auth' | 'insecure' | 'ca' | 'cert' | 'key'>>;

export interface RunnerHandle {
  /** Stops every session (process groups), flushes the spool, closes the socket. Idempotent. */
  stop(): Promise<void>;
  readonly config: StartRunnerConfig;
  readonly sessions: SessionManager;
  readonly workspaces: WorkspaceManager;
  readonly spool: Spool;
  readonly connection: RunnerConnection;
  readonly handlers: CommandHandlers;
  readonly providers: ProviderId[];
  /** Deterministic agents: the blueprints folder and the runs of its blueprints. */
  readonly blueprints: BlueprintCatalog;
  readonly runs: RunManager;
  /** The --listen HTTP server, when asked for. */
  readonly http: RunnerHttpServer | null;
}

export async function startRunner(config: StartRunnerConfig, options: StartRunnerOptions = {}): Promise<RunnerHandle> {
  const log = options.log ?? createStderrLogger();
  const dataDir = config.data_dir;
  const homesDir = path.join(dataDir, 'homes');
  await fs.promises.mkdir(dataDir, { recursive: true });
  // The DTA verifier's parse memo lives where sessions cannot write (runner/dta/verifier/memo.ts).
  setVerifierMemoDir(path.join(dataDir, 'dta'));
  // Homes of sessions that died with the last runner; nothing is running in them now.
  await fs.promises.rm(homesDir, { recursive: true, force: true });
  await fs.promises.mkdir(homesDir, { recursive: true });

  // Approvals pending when the last runner died: their shims died with it, so the actions never
  // ran; each is recorded as denied ('runner_restarted') before the spool fails its session.
  const approvalJournal = new ApprovalJournal(path.join(dataDir, 'approvals'), log);
  const spool = await Spool.open(path.join(dataDir, 'spool'), { log, restartEvents: approvalJournal.takeLeftovers() });
  const workspaces = new WorkspaceManager(dataDir, log);
  await workspaces.init();
  await workspaces.cleanupOrphans();
  const { providers, info: providerInfo } = await detectAll(options.providers ?? defaultProviders({ providerAuth: config.provider_auth ?? [], runnerHome: os.homedir() }), log);
  // One local endpoint for every session's hook calls; each session gets its own token.
  const hooks = await HookServer.start(log);
  // Every session in its own bubblewrap sandbox where this machine allows it (README, "Threat model").
  const sandbox = options.sandbox ?? (await setUpSandbox({ dataDir, env: parseSandboxEnv(options.env ?? process.env), log }));
  const readOnly = options.readOnlyPrevention !== undefined ? { available: options.readOnlyPrevention, why: 'set by the caller' } : await probeReadOnlyPrevention();
  if (sandbox.available) log.info('read-only sessions: worktree mounted read-only in the sandbox');
  else
    log.info(
      readOnly.available
        ? `read-only sessions: worktree mounted read-only (${readOnly.why})`
        : `read-only sessions: writes are detected and reverted, not prevented (${readOnly.why})`,
    );
  const labels = config.labels ?? [];
  const repoAccess = config.repo_access ?? [];
  // The same probe says whether sessions can get their own namespaces for the guard shims,
  // read-only forbidden files and restricted network (README, "Approvals and policy").
  const guardNamespace = options.guardNamespace ?? readOnly.available;
  if (sandbox.available) log.info('approvals and policy: guard wrappers bound over the real binaries in every session\'s sandbox');
  else log.info(
    guardNamespace
      ? 'approvals and policy: guard wrappers bind-mounted over the real binaries in a per-session mount namespace'
      : 'approvals and policy: PATH shims only (no mount namespace); restricted network is NOT enforced (each such session says so)',
  );
  const sessions = new SessionManager({
    spool,
    workspaces,
    providers,
    homesDir,
    log,
    capacity: config.capacity,
    readOnlyPrevention: readOnly.available,
    hooks,
    guardNamespace,
    approvalJournal,
    sandbox,
  });
  // Deterministic agents: blueprints from their folder (reloaded when it changes), runs journalled.
  let connection: RunnerConnection | null = null;
  const blueprints = new BlueprintCatalog(config.blueprints_dir ?? path.join(dataDir, 'blueprints'), log, () => connection?.sendBlueprints());
  await blueprints.start();
  const runs = new RunManager({ catalog: blueprints, hooks, journalDir: path.join(dataDir, 'runs'), log, maxConcurrent: Math.max(1, config.capacity) });
  await runs.init();
  const canReach = createRepoAccess(repoAccess);
  const dta = new DtaRunService({ workspaces, publish: (u) => runs.publish(u), log, canReach });
  const workItems = createWorkItemService({ workspaces, publish: (u) => runs.publish(u), log, dataDir, canReach, sandbox, hooks, blueprints, capacity: config.capacity });
  const handlers = createCommandHandlers({ sessions, workspaces, log, canReach, runs, dta, workItems });
  const sender = new EventSender(spool, log);
  const providerIds = [...providers.keys()].sort();

  const registerBody = (): RunnerRegister => ({
    name: config.name,
    hostname: (os.hostname() || 'unknown').slice(0, 255),
    version: RUNNER_VERSION,
    capacity: config.capacity,
    providers: providerIds,
    provider_info: providerInfo,
    labels,
    repo_access: repoAccess,
    sessions: sessions.owned().slice(0, MAX_REPORTED_SESSIONS),
    blueprints: blueprints.blueprints,
    blueprint_problems: blueprints.problems,
    runs: runs.known().slice(0, MAX_REPORTED_SESSIONS),
  });

  let stopping: Promise<void> | null = null;
  connection = new RunnerConnection({
    server: config.server,
    token: config.token,
    tls: config.tls,
    registerBody,
    activeSessions: () => sessions.activeCount(),
    handlers,
    sender,
    runs,
    blueprints: () => ({ blueprints: blueprints.blueprints, problems: blueprints.problems }),
    log,
    onUnauthorized: options.onUnauthorized ?? (() => log.error('not retrying; restart the runner with a valid token')),
    // Viewers' acks sent while the socket was down never arrive: no PTY may stay paused for them.
    onRegistered: () => sessions.releaseFlowControl(),
  });

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      log.info(`stopping ${sessions.activeCount()} session(s)`);
      blueprints.close();
      await Promise.all([sessions.stopAll('stopped: the runner is shutting down'), runs.stopAll()]);
      if (sender.attached && spool.pendingCount() > 0) await sender.whenDrained(SHUTDOWN_DRAIN_MS);
      // Run results left unsent stay in the journal and go with the next start.
      const left = spool.pendingCount();
      sender.dispose();
      connection!.close();
      await http?.close();
      await hooks.close();
      spool.close();
      log.info(left > 0 ? `stopped; ${left} unacked event(s) stay spooled for the next start` : 'stopped');
    })();
    return stopping;
  };

  log.info(`runner "${config.name}" v${RUNNER_VERSION}: data in ${dataDir}, capacity ${config.capacity}, providers ${providerIds.join(', ') || 'none'}`);
  let http: RunnerHttpServer | null = null;
  if (config.listen !== null && config.listen !== undefined) {
    try {
      http = await startHttpServer({ port: config.listen, token: config.token, handlers, log });
    } catch (err) {
      spool.close();
      await hooks.close();
      throw new Error(`cannot listen on ${config.listen}: ${errorText(err)}`);
    }
  }
  connection.start();
  return { stop, config, sessions, workspaces, spool, connection, handlers, providers: providerIds, blueprints, runs, http };
}

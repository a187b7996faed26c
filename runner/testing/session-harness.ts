import path from 'node:path';
import { RunnerEventSchema, ok, type RunnerEvent } from '../../protocol';
import { HookServer } from '../hooks';
import { detectProviders, shellProvider } from '../providers';
import type { ProviderAdapter } from '../providers/types';
import type { SessionDeps } from '../sessions/session';
import { SessionManager } from '../sessions/session-manager';
import { EventSender } from '../spool/sender';
import { Spool } from '../spool/spool';
import { WorkspaceManager } from '../workspace/workspace-manager';
import { captureLogger, makeSampleRepo, makeTempDir, removeTempDir } from './fixtures';

/**
 * A runner's session side without the socket, for tests with real PTYs and real git: a sample
 * repository, a spool whose events are acknowledged as they are sent (and collected in `events`),
 * a workspace manager, the shell provider (plus any others), and optionally the hook server.
 */
export interface SessionHarness {
  tmp: string;
  source: string;
  dataDir: string;
  manager: SessionManager;
  workspaces: WorkspaceManager;
  spool: Spool;
  sender: EventSender;
  hooks: HookServer | null;
  events: RunnerEvent[];
  /** Everything the runner side logged. */
  logLines: string[];
  close(): Promise<void>;
}

export interface SessionHarnessOptions {
  /** Files of the sample repository (default: the small fixture repository). */
  repoFiles?: Record<string, string>;
  /** Start the hook server (provider hooks, guard shims, policy checks). */
  hooks?: boolean;
  /** Providers besides the shell. */
  providers?: ProviderAdapter[];
  /** Anything else the SessionManager takes (timings, capacity, namespace, journal…). */
  deps?: (dataDir: string) => Partial<SessionDeps>;
}

export async function makeSessionHarness(name: string, opts: SessionHarnessOptions = {}): Promise<SessionHarness> {
  const tmp = await makeTempDir(name);
  const source = makeSampleRepo(path.join(tmp, 'source'), opts.repoFiles);
  const dataDir = path.join(tmp, 'data');
  const log = captureLogger();
  const spool = await Spool.open(path.join(dataDir, 'spool'), { log });
  const workspaces = new WorkspaceManager(dataDir, log);
  await workspaces.init();
  const hooks = opts.hooks ? await HookServer.start(log) : null;
  const providers = await detectProviders([shellProvider(), ...(opts.providers ?? [])], log);
  const manager = new SessionManager({
    spool,
    workspaces,
    providers,
    homesDir: path.join(dataDir, 'homes'),
    log,
    capacity: 4,
    stopGraceMs: 300,
    ...(hooks ? { hooks } : {}),
    ...opts.deps?.(dataDir),
  });
  const events: RunnerEvent[] = [];
  const sender = new EventSender(spool, log);
  sender.attach((batch, done) => {
    events.push(...batch.map((e) => RunnerEventSchema.parse(e)));
    const highest = new Map<string, number>();
    for (const e of batch) highest.set(e.session_id, Math.max(highest.get(e.session_id) ?? 0, e.seq));
    done(ok({ acked: [...highest].map(([session_id, seq]) => ({ session_id, seq })) }));
  });
  return {
    tmp,
    source,
    dataDir,
    manager,
    workspaces,
    spool,
    sender,
    hooks,
    events,
    logLines: log.lines,
    async close() {
      await manager.stopAll('test over');
      sender.dispose();
      spool.close();
      await hooks?.close();
      await removeTempDir(tmp);
    },
  };
}

/** Events of one type for one session. */
export const eventsOf = <T extends RunnerEvent['type']>(events: RunnerEvent[], sid: string, type: T) =>
  events.filter((e): e is Extract<RunnerEvent, { type: T }> => e.session_id === sid && e.type === type);

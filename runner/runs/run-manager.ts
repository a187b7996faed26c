import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  ProceduralResultSchema,
  RunIdSchema,
  RunUpdateSchema,
  fail,
  ok,
  type Invocation,
  type ProceduralResult,
  type Result,
  type RunUpdate,
  type StartRunCommand,
} from '../../protocol';
import type { BlueprintCatalog } from '../blueprints/catalog';
import { describeAjvErrors } from '../../common/ajv';
import type { HookServer } from '../hooks';
import { errorMessage, type Logger } from '../log';

/** The executor program (its own process per run, fed the invocation on stdin). */
export const EXECUTOR_PATH = fileURLToPath(new URL('../executors/deterministic/ao-deterministic-exec.mjs', import.meta.url));
/** Past its own timeout plus this, an executor that is still there is stopped by the runner. */
const EXECUTOR_BACKSTOP_MS = 30_000;
/** After SIGTERM, an executor gets this long to report before SIGKILL. */
const EXECUTOR_KILL_GRACE_MS = 5_000;
/** The executor's own stderr kept for a run that ended without a result. */
const EXECUTOR_STDERR_BYTES = 4_000;
/** An unanswered or refused batch of updates is tried again after this. */
export const UPDATE_RETRY_MS = 2_000;

/** How updates reach the control plane: the ack is null when the batch was not stored. */
export type RunTransport = (batch: RunUpdate[], done: (acked: boolean) => void) => void;

/** `<data-dir>/runs/<run_id>.json`: read back after a restart, so checked like any input. */
const JournalEntrySchema = z.object({
  run_id: RunIdSchema,
  org_id: z.string(),
  agent_name: z.string(),
  started_at: z.number(),
  /** Set once the run ended; the file is deleted when the control plane has it. */
  finished: RunUpdateSchema.nullable(),
});
type JournalEntry = z.infer<typeof JournalEntrySchema>;

interface LiveRun {
  entry: JournalEntry;
  child: ChildProcess;
  result: ProceduralResult | null;
  stderr: string;
  backstop: NodeJS.Timeout | null;
  timeoutSeconds: number;
}

export interface RunManagerDeps {
  catalog: BlueprintCatalog;
  hooks: HookServer;
  /** `<data-dir>/runs`: one small file per run until the control plane has its end. */
  journalDir: string;
  log: Logger;
  /** Runs at the same time on this runner. */
  maxConcurrent: number;
  /** Tests may run another executor. */
  executorPath?: string;
}

/**
 * Deterministic runs on this runner: checks a `run:start` against the blueprint it names (only
 * this runner's blueprints can run here), spawns the executor with the invocation on stdin, takes
 * its `result` on the runner's local gateway (the hook endpoint, one token per run) and reports
 * RUN_STARTED / RUN_FINISHED. Updates are journalled before they are sent and resent until
 * acked; a run the previous runner process left running is reported as failed.
 */
export class RunManager {
  private readonly live = new Map<string, LiveRun>();
  private readonly pending: RunUpdate[] = [];
  private readonly journal = new Map<string, JournalEntry>();
  private readonly used = new Set<string>();
  private transport: RunTransport | null = null;
  private inFlight = false;
  private retry: NodeJS.Timeout | null = null;
  private shuttingDown = false;
  private readonly exits = new Map<string, Promise<void>>();

  constructor(private readonly deps: RunManagerDeps) {}

  /** Reads the journal a previous runner process left: its unfinished runs died with it. */
  async init(): Promise<void> {
    const { journalDir, log } = this.deps;
    await fs.promises.mkdir(journalDir, { recursive: true });
    for (const name of (await fs.promises.readdir(journalDir)).sort()) {
      if (!/^run_[A-Za-z0-9_-]+\.json$/.test(name)) {
        if (name.endsWith('.tmp')) await fs.promises.rm(path.join(journalDir, name), { force: true });
        continue;
      }
      let entry: JournalEntry;
      try {
        const parsed = JournalEntrySchema.safeParse(JSON.parse(await fs.promises.readFile(path.join(journalDir, name), 'utf8')));
        if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid');
        entry = parsed.data;
      } catch (err) {
        log.warn(`run journal ${name} is unreadable (${errorMessage(err)}); deleting it`);
        await fs.promises.rm(path.join(journalDir, name), { force: true });
        continue;
      }
      if (!entry.finished) {
        entry.finished = {
          type: 'RUN_FINISHED',
          run_id: entry.run_id,
          ts: Date.now(),
          status: 'failed',
          result: null,
          error: 'The runner restarted while the run was running; its process ended with it.',
        };
        this.writeJournal(entry);
        log.info(`run ${entry.run_id} (${entry.agent_name}) died with the previous runner; reporting it failed`);
      }
      this.journal.set(entry.run_id, entry);
      this.used.add(entry.run_id);
      this.pending.push(entry.finished);
    }
  }

  /** Runs the control plane should still hear about (for the register message). */
  known(): Array<{ run_id: string }> {
    return [...this.journal.keys()].map((run_id) => ({ run_id }));
  }

  get activeCount(): number {
    return this.live.size;
  }

  // ---- run:start ----

  start(cmd: StartRunCommand): Result<{ run_id: string }> {
    const { catalog, log } = this.deps;
    if (this.shuttingDown) return fail('RUNNER_ERROR', 'runner is shutting down');
    if (this.used.has(cmd.run_id)) return fail('CONFLICT', `run ${cmd.run_id} already exists on this runner`);
    const blueprint = catalog.get(cmd.agent_name);
    if (!blueprint) return fail('NOT_FOUND', `this runner has no blueprint named "${cmd.agent_name}"`);
    const validate = catalog.validator(cmd.agent_name);
    // The control plane checked already; the blueprint here is the one that counts (it may have changed since).
    const parameters = structuredClone(cmd.parameters);
    if (!validate || !validate(parameters)) return fail('BAD_REQUEST', `invalid parameters: ${describeAjvErrors(validate?.errors)}`);
    if (this.live.size >= this.deps.maxConcurrent) {
      return fail('NO_RUNNER', `runner is busy (${this.live.size} of ${this.deps.maxConcurrent} runs at once)`);
    }
    const entry: JournalEntry = { run_id: cmd.run_id, org_id: cmd.org_id, agent_name: cmd.agent_name, started_at: Date.now(), finished: null };
    this.used.add(cmd.run_id);
    this.journal.set(cmd.run_id, entry);
    this.writeJournal(entry);

    const endpoint = this.deps.hooks.register(cmd.run_id, (call) => {
      if (call.provider !== 'deterministic' || call.event !== 'result') return {};
      const parsed = ProceduralResultSchema.safeParse(call.payload);
      if (!parsed.success) throw new Error(`bad result event: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      const run = this.live.get(cmd.run_id);
      if (run) run.result = parsed.data;
      return {};
    });
    const invocation: Invocation = {
      schema_version: '2.2',
      mode: 'start',
      session_id: cmd.run_id,
      parameters,
      command: blueprint.command,
      project_dir: blueprint.project_dir,
      gateway_url: endpoint.url,
      gateway_token: endpoint.token,
      timeout_seconds: blueprint.timeout_seconds,
    };
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [this.deps.executorPath ?? EXECUTOR_PATH], {
        cwd: blueprint.project_dir,
        env: runEnv(cmd.run_id, cmd.agent_name) as unknown as NodeJS.ProcessEnv,
        stdio: ['pipe', 'ignore', 'pipe'],
        detached: true,
      });
    } catch (err) {
      this.deps.hooks.unregister(cmd.run_id);
      this.journal.delete(cmd.run_id);
      void fs.promises.rm(this.journalPath(cmd.run_id), { force: true });
      return fail('RUNNER_ERROR', `could not start the executor: ${errorMessage(err)}`);
    }
    const run: LiveRun = { entry, child, result: null, stderr: '', backstop: null, timeoutSeconds: blueprint.timeout_seconds };
    this.live.set(cmd.run_id, run);
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(JSON.stringify(invocation));
    child.stderr!.on('data', (b: Buffer) => {
      run.stderr = (run.stderr + b.toString('utf8')).slice(-EXECUTOR_STDERR_BYTES);
    });
    run.backstop = setTimeout(() => {
      log.warn(`run ${cmd.run_id}: the executor outlived its timeout; stopping it`);
      this.signal(run, 'SIGTERM');
      setTimeout(() => this.signal(run, 'SIGKILL'), EXECUTOR_KILL_GRACE_MS).unref();
    }, blueprint.timeout_seconds * 1000 + EXECUTOR_BACKSTOP_MS);
    run.backstop.unref();
    const exited = new Promise<void>((resolve) => {
      child.on('error', (err) => {
        run.stderr += `\n${errorMessage(err)}`;
      });
      child.on('close', (code, signal) => {
        this.onExit(run, code, signal);
        resolve();
      });
    });
    this.exits.set(cmd.run_id, exited);
    void exited.then(() => this.exits.delete(cmd.run_id));
    log.info(`run ${cmd.run_id} started: ${cmd.agent_name} (pid ${child.pid ?? '?'})`);
    this.queue({ type: 'RUN_STARTED', run_id: cmd.run_id, ts: Date.now() });
    return ok({ run_id: cmd.run_id });
  }

  private signal(run: LiveRun, sig: NodeJS.Signals): void {
    if (run.child.pid === undefined || run.child.exitCode !== null || run.child.signalCode !== null) return;
    try {
      process.kill(-run.child.pid, sig);
    } catch {
      // Already gone.
    }
  }

  private onExit(run: LiveRun, code: number | null, signal: NodeJS.Signals | null): void {
    const id = run.entry.run_id;
    if (run.backstop) clearTimeout(run.backstop);
    this.deps.hooks.unregister(id);
    this.live.delete(id);
    const r = run.result;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    let status: 'completed' | 'failed' = 'failed';
    let error: string | null;
    if (!r) {
      const stderr = run.stderr.trim().split('\n').slice(-5).join('\n');
      error = code === 2 ? `The executor refused the invocation: ${stderr}` : `The executor ${how} without a result${stderr ? `: ${stderr}` : ''}`;
    } else if (r.spawn_error) {
      error = `Could not start the command: ${r.spawn_error}`;
    } else if (r.timed_out) {
      error = `Timed out after ${run.timeoutSeconds} s; the command was stopped${r.stdout_truncated ? ' (stdout was cut at the output cap)' : ''}.`;
    } else if (r.exit_code === null) {
      error = `The command was killed by ${r.signal ?? 'a signal'}.`;
    } else if (r.exit_code !== 0) {
      error = `The command exited with code ${r.exit_code}.`;
    } else {
      status = 'completed';
      error = null;
    }
    // Stopped by us rather than ended by itself: say so, whatever the command's exit looked like.
    if (this.shuttingDown && status === 'failed') error = `Stopped: the runner shut down while the run was running. (${error})`;
    const finished: RunUpdate = { type: 'RUN_FINISHED', run_id: id, ts: Date.now(), status, result: r, error: error ? error.slice(0, 4000) : null };
    run.entry.finished = finished;
    this.writeJournal(run.entry);
    this.deps.log.info(`run ${id} ${status}${error ? `: ${error.split('\n')[0]}` : ''}`);
    this.queue(finished);
  }

  // ---- reporting ----

  /** Connected and registered: send everything not yet acked. */
  attach(transport: RunTransport): void {
    this.transport = transport;
    this.inFlight = false;
    this.flush();
  }

  detach(): void {
    this.transport = null;
    this.inFlight = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }

  pendingCount(): number {
    return this.pending.length;
  }

  /** Other updates on this channel (DTA runs): sent in order and resent until acked, like a run's. */
  publish(update: RunUpdate): void {
    this.queue(update);
  }

  private queue(update: RunUpdate): void {
    this.pending.push(update);
    this.flush();
  }

  private flush(): void {
    const transport = this.transport;
    if (!transport || this.inFlight || this.pending.length === 0 || this.retry) return;
    // Starts are tiny; a finished run carries up to half a megabyte of stdout, so one per batch.
    const batch: RunUpdate[] = [];
    // A DTA event can carry a patch of up to half a megabyte too: also alone.
    for (const u of this.pending) {
      if (u.type !== 'RUN_STARTED' && batch.length > 0) break;
      batch.push(u);
      if (u.type !== 'RUN_STARTED' || batch.length >= 50) break;
    }
    this.inFlight = true;
    transport(batch, (acked) => {
      if (this.transport !== transport) return;
      this.inFlight = false;
      if (!acked) {
        this.retry = setTimeout(() => {
          this.retry = null;
          this.flush();
        }, UPDATE_RETRY_MS);
        this.retry.unref();
        return;
      }
      for (const u of batch) {
        const i = this.pending.indexOf(u);
        if (i >= 0) this.pending.splice(i, 1);
        if (u.type === 'RUN_FINISHED') {
          this.journal.delete(u.run_id);
          void fs.promises.rm(this.journalPath(u.run_id), { force: true }).catch(() => undefined);
        }
      }
      this.flush();
    });
  }

  // ---- shutdown ----

  /** Stops every run (their results say so) and waits for the executors to end. */
  async stopAll(): Promise<void> {
    this.shuttingDown = true;
    const runs = [...this.live.values()];
    for (const r of runs) this.signal(r, 'SIGTERM');
    const kill = setTimeout(() => runs.forEach((r) => this.signal(r, 'SIGKILL')), EXECUTOR_KILL_GRACE_MS);
    await Promise.all([...this.exits.values()]);
    clearTimeout(kill);
  }

  private journalPath(runId: string): string {
    return path.join(this.deps.journalDir, `${runId}.json`);
  }

  /** Written synchronously: the entry must be on disk before anyone hears of the run. */
  private writeJournal(entry: JournalEntry): void {
    try {
      const tmp = `${this.journalPath(entry.run_id)}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(entry));
      fs.renameSync(tmp, this.journalPath(entry.run_id));
    } catch (err) {
      this.deps.log.error(`could not write the journal of run ${entry.run_id}`, err);
    }
  }
}

/**
 * The executor's (and so the command's) environment: the runner's PATH — blueprints are the runner
 * owner's own tools, found where the owner installed them — plus HOME, locale and the run's
 * identity. Nothing else of the runner's environment (its token above all) is passed on.
 */
export function runEnv(runId: string, agentName: string): Record<string, string> {
  let user = 'runner';
  try {
    user = os.userInfo().username;
  } catch {
    // Keep the default.
  }
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: os.homedir(),
    LANG: process.env.LANG ?? 'C.UTF-8',
    USER: user,
    LOGNAME: user,
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    AGENT_VILLAGE_RUN_ID: runId,
    AGENT_VILLAGE_AGENT: agentName,
  };
}

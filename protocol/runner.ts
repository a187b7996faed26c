import { z } from 'zod';
import type { Ack } from './result';
import { RunnerEventSchema } from './events';
import type { RunnerFrame } from './runner-frame';
import { PatrolSpecSchema, type PatrolDefaults, type RepoInspectCommand } from './patrols';
import {
  BlueprintProblemSchema,
  BlueprintSchema,
  DETERMINISTIC_LIMITS,
  KnownRunSchema,
  type DeterministicRunnerToServerEvents,
  type DeterministicServerToRunnerEvents,
} from './deterministic';
import type { RadarServerToRunnerEvents } from './radar';
import { OrgIdSchema, ProviderIdSchema, RepoIdSchema, RepoRefSchema, RepoTreeSchema, RoomPathSchema, SessionIdSchema } from './world';

/**
 * Flow control for terminal output. VS Code's pty host uses 100 000 / 5 000 over local IPC; our
 * round trip also crosses the runner socket, the database commit and the browser socket, so the
 * window must cover that bandwidth-delay product: at 100 000 a 64 MB cat crawled at ~1 MB/s.
 * A 1 MB window still drains in well under 100 ms after Ctrl-C. (Figures: README, Benchmarks.)
 *
 * Acks are messages, and on a loaded 2-core machine every message costs each hop it crosses a
 * read, a parse and a write of its own (~0.5 ms on the control plane's main thread, the hop that
 * bounds throughput: bench:live BENCH_TIMELINE=1), so a viewer acks in big steps: one per
 * ACK_CHARS parsed, or ACK_DELAY_MS after the last unacked output. LOW_WATERMARK_CHARS sits one
 * ack step and more below HIGH, so a paused PTY resumes on a character ack while the browser still
 * has half a window to parse — never on the timer with an idle browser.
 */
export const FLOW_CONTROL = {
  /** Pause the PTY when this many characters are sent but not yet parsed by a viewer. */
  HIGH_WATERMARK_CHARS: 1_000_000,
  /** Resume it when the backlog falls below this (hysteresis keeps the pipe full meanwhile). */
  LOW_WATERMARK_CHARS: 500_000,
  /** A viewer acks at once after parsing this many characters (smaller backlogs wait for ACK_DELAY_MS). */
  ACK_CHARS: 200_000,
  /**
   * Output below ACK_CHARS is acked this long after it was parsed: it only has to arrive before the
   * backlog could reach the high watermark, and a shorter timer acks every frame of a flood.
   */
  ACK_DELAY_MS: 100,
  /**
   * A viewer whose xterm has parsed all it was handed acks at once when at least this much is
   * unacked, instead of waiting for ACK_CHARS or the delay: nothing more is coming from it until
   * more arrives, and the PTY may sit paused for exactly these characters (bench:live BENCH_PIPE:
   * 124–155 KB parsed but unacked at the PTY's pauses, 10% of the window). A flood's write batches
   * are this big; a trickle's outputs (a line, a prompt) still wait for the delay, one ack for many.
   */
  ACK_DRAINED_CHARS: 50_000,
} as const;

/**
 * Runners dial a Socket.IO engine of their own at this path (not the browsers' /socket.io): it
 * authenticates the token in the HTTP handshake, before a websocket exists, so an anonymous
 * client never gets a byte parsed, and only token holders get the large event-batch buffer.
 */
export const RUNNER_SOCKET_PATH = '/runner-socket.io';
/** The runner namespace on that engine. */
export const RUNNER_NAMESPACE = '/runner';

/** Provider availability as detected on the runner (binary on PATH and its version). */
export const ProviderInfoSchema = z.object({
  id: ProviderIdSchema,
  version: z.string().max(200).nullable(),
  /** The CLI versions (semver range) the runner's adapter was written for; null: any. */
  version_range: z.string().max(100).nullable().optional(),
  /** Whether `version` is inside that range (null: the version could not be read). */
  version_supported: z.boolean().nullable().optional(),
  /** The runner user's sign-in file for this CLI is shared, read-only, with sessions (--provider-auth). */
  shares_auth_file: z.boolean().optional(),
});
export type ProviderInfo = z.infer<typeof ProviderInfoSchema>;

export const RunnerRegisterSchema = z.object({
  name: z.string().min(1).max(100),
  hostname: z.string().min(1).max(255),
  version: z.string().max(50),
  capacity: z.number().int().min(0).max(1000),
  providers: z.array(ProviderIdSchema).max(10),
  /** Versions of the providers found (same ids as `providers`). */
  provider_info: z.array(ProviderInfoSchema).max(10).default([]),
  /** Free-form labels for placement and display ("gpu", "eu-west", "customer-hosted"). */
  labels: z.array(z.string().min(1).max(50)).max(50).default([]),
  /**
   * Repository sources this runner can reach, as glob patterns over the source string
   * ("/srv/code/**", "https://github.com/acme/*"); "*" or an empty list means any.
   */
  repo_access: z.array(z.string().min(1).max(500)).max(200).default([]),
  /** Sessions the runner still owns (alive, or with unacked events), so the server can reconcile. */
  sessions: z.array(z.object({ session_id: SessionIdSchema, alive: z.boolean() })).max(1000),
  /** Deterministic agents this runner offers (its blueprints folder), bound to it on the server. */
  blueprints: z.array(BlueprintSchema).max(DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_PER_RUNNER).default([]),
  /** Blueprint files it skipped, with the reason. */
  blueprint_problems: z.array(BlueprintProblemSchema).max(DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_PER_RUNNER).default([]),
  /** Runs it still has (running, or finished but unacked): others of this runner died with an earlier process. */
  runs: z.array(KnownRunSchema).max(1000).default([]),
  /**
   * Random per runner process, never in its environment: a reconnect of the same process replaces
   * its own stale socket at once, while another process with the same name and token is refused
   * while this one is alive.
   */
  instance_id: z.string().min(16).max(100).optional(),
});
export type RunnerRegister = z.infer<typeof RunnerRegisterSchema>;

export const RunnerRegisteredSchema = z.object({
  runner_id: z.string(),
  org_id: OrgIdSchema,
  heartbeat_ms: z.number().int().positive(),
  /**
   * The highest binary event-frame version (runner-frame.ts) this control plane decodes. Absent
   * (an older control plane): the runner sends JSON batches (`runner:events`), which every
   * control plane keeps accepting, so either side can be upgraded first.
   */
  frames: z.number().int().min(0).optional(),
});
export type RunnerRegistered = z.infer<typeof RunnerRegisteredSchema>;

export const RunnerHeartbeatSchema = z.object({
  active_sessions: z.number().int().min(0),
  ts: z.number().int().nonnegative(),
  /** Runner health: p99 event-loop delay over the last interval, and resident memory. */
  event_loop_lag_ms: z.number().nonnegative().optional(),
  rss_bytes: z.number().int().nonnegative().optional(),
});
export type RunnerHeartbeat = z.infer<typeof RunnerHeartbeatSchema>;

/** Events go in batches (in seq order per session); the ack names the highest stored seq per session. */
export const RunnerEventBatchSchema = z.array(RunnerEventSchema).min(1).max(1000);
export const EventAckSchema = z.object({
  acked: z.array(z.object({ session_id: SessionIdSchema, seq: z.number().int().nonnegative() })),
});
export type EventAck = z.infer<typeof EventAckSchema>;

// ---- Control plane → runner commands (agent-runner.md §6.3 bodies) ----

export const TaskSchema = z.object({
  title: z.string().max(500),
  goal: z.string().max(10000).optional(),
  constraints: z.array(z.string().max(500)).max(50).optional(),
  acceptance: z.array(z.string().max(500)).max(50).optional(),
});

/**
 * Session policy (agent-runner.md §4.5), decided by the control plane and enforced on the runner.
 * Command lists hold program names or command prefixes ("git push --force", "curl http://");
 * path lists hold globs relative to the worktree.
 */
export const PolicySchema = z.object({
  /** When non-empty, only these programs may run (first word of each command). */
  shell_allowlist: z.array(z.string().min(1).max(200)).max(500).optional(),
  /** Commands (prefixes) that never run, typed by a person or run by an agent. */
  shell_denylist: z.array(z.string().min(1).max(200)).max(500).optional(),
  /** No writes here (globs relative to the worktree), e.g. ".env", "secrets/**". */
  forbidden_paths: z.array(z.string().min(1).max(500)).max(500).optional(),
  /** When non-empty, writes only here (globs relative to the worktree). */
  allowed_paths: z.array(z.string().min(1).max(500)).max(500).optional(),
  /**
   * restricted: the session has its own network namespace and reaches only `allow_hosts`, through
   * the runner's filtering proxy (entries: `host`, `host:port`, `*.domain`); open: the runner's network.
   */
  network: z
    .object({
      mode: z.enum(['restricted', 'open']),
      allow_hosts: z
        .array(z.string().trim().toLowerCase().regex(/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/, 'must be a host name, host:port or *.domain'))
        .max(200)
        .optional(),
    })
    .optional(),
  requires_approval_for: z.array(z.enum(['merge', 'secrets', 'deploy', 'deps_add'])).optional(),
  /** Merging into or pushing to these branches is a "merge" that needs approval. */
  protected_branches: z.array(z.string().min(1).max(200)).max(100).optional(),
  /** Command prefixes that deploy ("kubectl apply", "terraform apply", "npm publish"). */
  deploy_patterns: z.array(z.string().min(1).max(200)).max(100).optional(),
  /** Even with approval, an agent never merges to a protected branch unless this is true. */
  auto_merge: z.boolean().optional(),
  /** Four eyes: the person who started the session cannot decide its approvals (the control plane checks). */
  approver_must_differ: z.boolean().optional(),
  /** An approval nobody answers in this time is denied. */
  approval_timeout_ms: z.number().int().min(1_000).max(24 * 3600_000).optional(),
  /** DTA runs wait for an approval between dry-run and apply (the default); false: policy applies them at once. */
  dta_gate: z.boolean().optional(),
  /** Strict tools: provider hooks refuse hand edits a DTA covers (links, renames) and name the DTA to use. */
  strict_tools: z.boolean().optional(),
  /**
   * "Always allow this": actions of these kinds (category + the rule that matched, e.g. merge /
   * "merge into protected branch main") run without asking. Added by an admin, usually from a
   * suggestion after repeated allows (issue 19 item 3).
   */
  always_allow: z
    // Secrets are not here: reading an org secret is asked every time.
    .array(z.object({ category: z.enum(['merge', 'deploy', 'deps_add']), rule: z.string().min(1).max(500) }))
    .max(200)
    .optional(),
});
export type Policy = z.infer<typeof PolicySchema>;

export const CreateSessionCommandSchema = z.object({
  session_id: SessionIdSchema,
  org_id: OrgIdSchema,
  repo_id: RepoIdSchema,
  repo: RepoRefSchema,
  /** Where the runner clones from: a local path or a git URL. */
  repo_source: z.string().min(1).max(4096),
  /**
   * branch: the runner clone's branch (it may hold approved merges the source has not received);
   * source_branch: the source repository's branch as last fetched (patrols check what was pushed);
   * commit: a sha.
   */
  checkout: z.object({ type: z.enum(['branch', 'source_branch', 'commit']), ref: z.string().min(1).max(255) }),
  room_path: RoomPathSchema,
  provider: ProviderIdSchema,
  task: TaskSchema,
  policy: PolicySchema.default({}),
  /**
   * The org's secrets for this session: injected into its environment by name, and masked in
   * everything the runner streams or stores. Never logged.
   */
  secrets: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(10_000)).default({}),
  /**
   * Names of `secrets` an admin marked "inject into sessions": only these go into the session's
   * environment. The others are for masking and for an approved `av-secret NAME -- cmd`.
   */
  inject_secrets: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).max(500).optional(),
  billing: z
    .object({ plan: z.enum(['free', 'team', 'enterprise']), limits: z.object({ max_concurrency: z.number().int().positive() }) })
    .optional(),
  mode: z.enum(['write', 'read_only']).default('write'),
  /** Present for a patrol: the runner runs this command non-interactively instead of the provider. */
  patrol: PatrolSpecSchema.optional(),
  cols: z.number().int().min(2).max(1000).default(120),
  rows: z.number().int().min(2).max(500).default(32),
});
export type CreateSessionCommand = z.infer<typeof CreateSessionCommandSchema>;

export const SessionInputCommandSchema = z.object({
  session_id: SessionIdSchema,
  data: z.string().max(65536),
  mode: z.enum(['raw', 'line']).default('raw'),
});
export type SessionInputCommand = z.infer<typeof SessionInputCommandSchema>;

export const SessionResizeCommandSchema = z.object({
  session_id: SessionIdSchema,
  cols: z.number().int().min(2).max(1000),
  rows: z.number().int().min(2).max(500),
});
export type SessionResizeCommand = z.infer<typeof SessionResizeCommandSchema>;

export const SessionRefSchema = z.object({ session_id: SessionIdSchema });
export type SessionRef = z.infer<typeof SessionRefSchema>;

/** Pause, with the reason the session shows (a person's pause, or "over budget" from the plan's cap). */
export const SessionPauseCommandSchema = SessionRefSchema.extend({ reason: z.string().min(1).max(2000).optional() });
export type SessionPauseCommand = z.infer<typeof SessionPauseCommandSchema>;

/** Flow-control acknowledgement: viewers have parsed the terminal output through this seq. */
export const TerminalAckSchema = z.object({ session_id: SessionIdSchema, seq: z.number().int().nonnegative() });
export type TerminalAck = z.infer<typeof TerminalAckSchema>;

/** agent-runner.md §6.3 approve: the decision is bound to one approval request. */
export const ApproveCommandSchema = z.object({
  session_id: SessionIdSchema,
  approval_id: z.string().min(1).max(100),
  /** The hash from APPROVAL_REQUESTED: a decision binds to exactly that command. */
  command_hash: z.string().min(1).max(200),
  decision: z.enum(['allow', 'deny']),
  note: z.string().max(2000).optional(),
  /** Who decided, from the control plane's login session (never from a browser payload). */
  decided_by: z.string().max(200),
});
export type ApproveCommand = z.infer<typeof ApproveCommandSchema>;

export const RepoScanCommandSchema = z.object({
  repo_id: RepoIdSchema,
  source: z.string().min(1).max(4096),
});
export type RepoScanCommand = z.infer<typeof RepoScanCommandSchema>;

export interface RunnerToServerEvents extends DeterministicRunnerToServerEvents {
  'runner:register': (body: RunnerRegister, ack: Ack<RunnerRegistered>) => void;
  'runner:heartbeat': (body: RunnerHeartbeat, ack: Ack<{ ts: number }>) => void;
  'runner:events': (batch: z.input<typeof RunnerEventBatchSchema>, ack: Ack<EventAck>) => void;
  /** The same batch with its terminal output as one binary attachment (runner-frame.ts). */
  'runner:frame': (frame: RunnerFrame, ack: Ack<EventAck>) => void;
}

export interface ServerToRunnerEvents extends DeterministicServerToRunnerEvents, RadarServerToRunnerEvents {
  'session:create': (cmd: z.input<typeof CreateSessionCommandSchema>, ack: Ack<{ session_id: string }>) => void;
  'session:input': (cmd: z.input<typeof SessionInputCommandSchema>, ack: Ack<null>) => void;
  'session:resize': (cmd: SessionResizeCommand, ack: Ack<null>) => void;
  'session:stop': (cmd: SessionRef, ack: Ack<null>) => void;
  /** Stop the whole process group where it stands (SIGSTOP); usage stops counting. */
  'session:pause': (cmd: SessionPauseCommand, ack: Ack<null>) => void;
  /** Continue a paused session (SIGCONT). */
  'session:resume': (cmd: SessionRef, ack: Ack<null>) => void;
  'session:approve': (cmd: ApproveCommand, ack: Ack<null>) => void;
  'terminal:ack': (cmd: TerminalAck) => void;
  'repo:scan': (cmd: RepoScanCommand, ack: Ack<z.infer<typeof RepoTreeSchema>>) => void;
  /** Read the default branch and suggest patrol commands (package.json scripts, config files). */
  'repo:inspect': (cmd: RepoInspectCommand, ack: Ack<PatrolDefaults>) => void;
}

export { RoomPathSchema };

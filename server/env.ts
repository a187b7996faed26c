import { resolve } from 'node:path';
import { z } from 'zod';
import { describeZodError } from '../protocol';

export const PROJECT_ROOT = resolve(import.meta.dirname, '..');

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no'])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
  PORT: z.coerce.number().int().min(0, 'PORT must be 0..65535').max(65535, 'PORT must be 0..65535').default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default(resolve(PROJECT_ROOT, 'data')),
  DATABASE_URL: z
    .string()
    .regex(/^(file:|postgres(ql)?:\/\/)/, 'DATABASE_URL must be a SQLite file: URL or a postgres:// URL')
    .optional(),
  /** This control-plane node's name in runner leases (default: host, pid and a random suffix). */
  AGENT_VILLAGE_NODE_ID: z.string().regex(/^[\w.:-]{1,100}$/, 'AGENT_VILLAGE_NODE_ID: letters, digits, . : _ - (1..100)').optional(),
  /**
   * Where people open the village (e.g. https://village.example.com): requests and socket
   * handshakes for any other Host are refused (DNS rebinding), and state changes must come from
   * this origin. Loopback (localhost, 127.0.0.1, [::1] on PORT) is always accepted.
   */
  PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'PUBLIC_URL must be an http:// or https:// URL, e.g. https://village.example.com' })
    .refine((u) => {
      if (!URL.canParse(u)) return true; // the URL check above says what is wrong
      const x = new URL(u);
      return (x.pathname === '/' || x.pathname === '') && !x.search && !x.hash && !x.username;
    }, 'PUBLIC_URL must be an origin only (scheme, host and port; no path, query or credentials)')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** Start a runner process beside the control plane (the one-command local setup). */
  AGENT_VILLAGE_ATTACHED_RUNNER: bool.default(true),
  /** Accept git URLs on loopback, link-local and private addresses (a forge on the LAN); off by default. */
  AGENT_VILLAGE_ALLOW_PRIVATE_GIT_HOSTS: bool.default(false),
  /** Accept outgoing webhook URLs on loopback, link-local and private addresses (a receiver on the LAN); off by default. */
  AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS: bool.default(false),
  /** Lines of scrollback a terminal keeps (snapshots, reattach and replay show this many). */
  AGENT_VILLAGE_TERMINAL_SCROLLBACK: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
  /** A reattach snapshot is stored after this many KB of output (a restarted control plane replays at most this much). */
  AGENT_VILLAGE_TERMINAL_SNAPSHOT_KB: z.coerce.number().int().min(16).max(1_048_576).default(4096),
  /** Snapshots kept per session, newest first; 0 keeps them all (replay can seek anywhere). */
  AGENT_VILLAGE_TERMINAL_SNAPSHOTS_KEPT: z.coerce.number().int().min(0).default(0),
  /** Terminal output kept per session in MB, newest first; 0 keeps it all (older output is pruned by segment). */
  AGENT_VILLAGE_TERMINAL_RETAIN_MB: z.coerce.number().int().min(0).max(1_000_000).default(0),
  /** Register the shipped demo repository on first start. */
  AGENT_VILLAGE_DEMO_REPO: bool.default(true),
  /** How long sessions of a lost runner wait for it to return before they are FAILED. */
  AGENT_VILLAGE_RUNNER_GRACE_MS: z.coerce.number().int().min(0).default(120_000),
  /** Socket.IO ping: a runner or browser that stops answering is dropped within interval + timeout. */
  AGENT_VILLAGE_PING_INTERVAL_MS: z.coerce.number().int().min(100).default(10_000),
  AGENT_VILLAGE_PING_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
  /** 32 bytes, base64: encrypts org secrets at rest (default: a key file beside the database). */
  AGENT_VILLAGE_SECRET_KEY: z.string().min(1).optional(),
  /** The plan a new org starts on (free | team | enterprise); plans are edited on the Billing page. */
  AGENT_VILLAGE_DEFAULT_PLAN: z.enum(['free', 'team', 'enterprise']).default('free'),
  /** Redis for patrol queues (BullMQ): several control-plane nodes then share one set of schedules. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'REDIS_URL must be a redis:// or rediss:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** BullMQ: tries per patrol job before it goes to the dead-letter queue, and the first retry delay (doubling). */
  AGENT_VILLAGE_PATROL_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  AGENT_VILLAGE_PATROL_BACKOFF_MS: z.coerce.number().int().min(10).default(10_000),
  /** BullMQ key prefix, so several installations can share one Redis. */
  AGENT_VILLAGE_QUEUE_PREFIX: z.string().regex(/^[\w-]{1,50}$/, 'AGENT_VILLAGE_QUEUE_PREFIX: letters, digits, _ and -').default('agent-village'),
  /** HTTPS: PEM certificate (chain) and key files; both or neither. */
  TLS_CERT: z.string().min(1).optional(),
  TLS_KEY: z.string().min(1).optional(),
  /** Mutual TLS for runners: PEM CA that signs runner client certificates (needs TLS_CERT/TLS_KEY). */
  TLS_CLIENT_CA: z.string().min(1).optional(),
  /** Serve the Next.js pages (tests of the realtime layer alone may switch it off). */
  AGENT_VILLAGE_NEXT: bool.default(true),
});

export type ServerEnv = z.infer<typeof EnvSchema> & { DATABASE_URL: string };

/** Parse the environment once at start-up; a bad value stops the server with a clear message. */
export function parseServerEnv(env: NodeJS.ProcessEnv = process.env): ServerEnv {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Bad environment: ${describeZodError(parsed.error)}`);
  }
  const data = parsed.data;
  if (!data.TLS_CERT !== !data.TLS_KEY) throw new Error('Bad environment: TLS_CERT and TLS_KEY go together (both PEM files, or neither)');
  if (data.TLS_CLIENT_CA && !data.TLS_CERT) throw new Error('Bad environment: TLS_CLIENT_CA (mutual TLS for runners) needs TLS_CERT and TLS_KEY');
  return { ...data, DATABASE_URL: data.DATABASE_URL ?? `file:${resolve(data.DATA_DIR, 'village.db')}` };
}

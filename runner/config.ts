import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { describeZodError } from '../protocol';
import { splitPatternList } from '../common/repo-access';
import { errorText } from '../common/error-text';

/** Default concurrency of one runner: a laptop copes with this many shells/agents at once. */
export const DEFAULT_CAPACITY = 8;

/** Comma-separated list from a flag or an environment variable; blanks dropped. */
const csv = (item: z.ZodString, max: number) =>
  z
    .string()
    .default('')
    .transform((v) => v.split(',').map((x) => x.trim()).filter((x) => x.length > 0))
    .pipe(z.array(item).max(max));

/** A path flag: `~/` expanded, made absolute. */
const filePath = z
  .string()
  .trim()
  .min(1)
  .optional()
  .transform((d) => (d === undefined ? undefined : path.resolve(d.startsWith('~/') ? path.join(os.homedir(), d.slice(2)) : d)));

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no'], { error: 'must be 1 or 0' })
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

/** localhost, 127.0.0.0/8 or ::1: traffic that never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

export const INSECURE_REFUSAL =
  'is plain http:// (or ws://) to a host that is not this machine: the runner token and every session’s output would cross the network unencrypted. ' +
  'Use https:// (with --ca FILE for a private CA), or pass --insecure (AGENT_RUNNER_INSECURE=1) if the network in between is trusted';

export const RunnerConfigSchema = z.object({
  server: z
    .string({ error: 'is required (--server or AGENT_RUNNER_SERVER)' })
    .trim()
    .url('must be a URL such as http://localhost:3000')
    .refine((u) => /^(https?|wss?):\/\//.test(u), 'must start with http://, https://, ws:// or wss://')
    .transform((u) => u.replace(/\/+$/, '')),
  token: z.string({ error: 'is required (--token or AGENT_RUNNER_TOKEN)' }).trim().min(1, 'must not be empty'),
  name: z.string().trim().min(1).max(100).default(() => os.hostname().slice(0, 100) || 'runner'),
  data_dir: z
    .string()
    .trim()
    .min(1)
    .default(() => path.join(os.homedir(), '.agent-runner'))
    .transform((d) => path.resolve(d.startsWith('~/') ? path.join(os.homedir(), d.slice(2)) : d)),
  capacity: z.coerce.number({ error: 'must be a whole number' }).int('must be a whole number').min(0).max(1000).default(DEFAULT_CAPACITY),
  /** RunnerRegisterSchema's limits. */
  labels: csv(z.string().max(50, 'a label is at most 50 characters'), 50),
  // Commas inside braces belong to a pattern (one matcher with the control plane: common/repo-access.ts).
  repo_access: z.string().default('').transform(splitPatternList).pipe(z.array(z.string().max(500, 'a pattern is at most 500 characters')).max(200)),
  /** Providers whose sign-in file the runner user shares read-only with sessions (README, "Using real agents"). */
  provider_auth: z
    .string()
    .default('')
    .transform((v) => [...new Set(v.split(',').map((x) => x.trim()).filter((x) => x.length > 0))])
    .pipe(z.array(z.enum(['claude', 'codex', 'gemini'], { error: 'names claude, codex or gemini' }))),
  /**
   * Deterministic agents: `*.json` blueprints, read at start and whenever the folder changes.
   * Default: `<data-dir>/blueprints` (so `~/.agent-runner/blueprints` with the default data dir).
   */
  blueprints_dir: z
    .string()
    .trim()
    .min(1)
    .optional()
    .transform((d) => (d === undefined ? undefined : path.resolve(d.startsWith('~/') ? path.join(os.homedir(), d.slice(2)) : d))),
  /** Also serve the §6.3 commands as HTTP on 127.0.0.1:<listen> (null: not at all). */
  listen: z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a port number')
    .min(0, 'must be a port number (0–65535)')
    .max(65535, 'must be a port number (0–65535)')
    .nullable()
    .default(null),
  /** Allow plain http:// to a control plane that is not on loopback. */
  insecure: flag,
  /** PEM bundle of CAs to trust for an https:// control plane (besides Node's built-in ones). */
  ca: filePath,
  /** Mutual TLS: the runner's client certificate and its private key (PEM). */
  cert: filePath,
  key: filePath,
})
  .superRefine((c, ctx) => {
    if (!c.insecure && /^(http|ws):\/\//.test(c.server) && !isLoopbackHost(new URL(c.server).hostname)) {
      ctx.addIssue({ code: 'custom', path: ['server'], message: INSECURE_REFUSAL });
    }
    if ((c.cert === undefined) !== (c.key === undefined)) {
      ctx.addIssue({ code: 'custom', path: [c.cert === undefined ? 'cert' : 'key'], message: 'a client certificate needs both --cert and --key' });
    }
    if ((c.ca || c.cert) && !/^(https|wss):\/\//.test(c.server)) {
      ctx.addIssue({ code: 'custom', path: [c.ca ? 'ca' : 'cert'], message: 'TLS files only apply to an https:// control plane' });
    }
  });

/** The PEM files read at start-up (a missing or unreadable file is a configuration error). */
export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}
export type RunnerConfig = z.infer<typeof RunnerConfigSchema> & { tls?: TlsMaterial };
export type RunnerConfigInput = z.input<typeof RunnerConfigSchema>;

export type ConfigResult = { ok: true; config: RunnerConfig } | { ok: false; message: string; help?: boolean };

export const USAGE = `usage: node --import tsx runner/index.ts --server URL --token TOKEN [--name NAME] [--data-dir DIR] [--capacity N]
       [--labels a,b] [--repo-access PATTERN[,PATTERN]] [--listen PORT] [--blueprints-dir DIR] [--provider-auth claude,codex,gemini]
       [--ca FILE] [--cert FILE --key FILE] [--insecure]
  env fallbacks: AGENT_RUNNER_SERVER, AGENT_RUNNER_TOKEN, AGENT_RUNNER_NAME, AGENT_RUNNER_DATA_DIR (default ~/.agent-runner), AGENT_RUNNER_CAPACITY (default ${DEFAULT_CAPACITY}),
  AGENT_RUNNER_LABELS, AGENT_RUNNER_REPO_ACCESS (globs over the repository source; empty or * = any), AGENT_RUNNER_LISTEN (HTTP on 127.0.0.1, Bearer = the runner token),
  AGENT_RUNNER_BLUEPRINTS_DIR (deterministic agents' *.json blueprints; default <data-dir>/blueprints),
  AGENT_RUNNER_PROVIDER_AUTH (share your own sign-in file of these CLIs, read-only, with sessions),
  AGENT_RUNNER_CA (PEM CAs to trust for https://), AGENT_RUNNER_CERT + AGENT_RUNNER_KEY (client certificate for mutual TLS),
  AGENT_RUNNER_INSECURE=1 (allow plain http:// to a control plane that is not on this machine)`;

/** Flags win over environment variables; empty environment variables count as unset. */
export function loadConfig(argv: string[], env: Record<string, string | undefined>): ConfigResult {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        server: { type: 'string' },
        token: { type: 'string' },
        name: { type: 'string' },
        'data-dir': { type: 'string' },
        capacity: { type: 'string' },
        labels: { type: 'string' },
        'repo-access': { type: 'string' },
        listen: { type: 'string' },
        'blueprints-dir': { type: 'string' },
        ca: { type: 'string' },
        cert: { type: 'string' },
        key: { type: 'string' },
        insecure: { type: 'boolean' },
        'provider-auth': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { ok: false, message: `${errorText(err)}\n${USAGE}` };
  }
  if (values.help) return { ok: false, message: USAGE, help: true };
  const pick = (flag: string, envName: string): string | undefined => {
    const v = values[flag];
    if (typeof v === 'string') return v;
    const e = env[envName];
    return e === undefined || e === '' ? undefined : e;
  };
  const parsed = RunnerConfigSchema.safeParse({
    server: pick('server', 'AGENT_RUNNER_SERVER'),
    token: pick('token', 'AGENT_RUNNER_TOKEN'),
    name: pick('name', 'AGENT_RUNNER_NAME'),
    data_dir: pick('data-dir', 'AGENT_RUNNER_DATA_DIR'),
    capacity: pick('capacity', 'AGENT_RUNNER_CAPACITY'),
    labels: pick('labels', 'AGENT_RUNNER_LABELS'),
    repo_access: pick('repo-access', 'AGENT_RUNNER_REPO_ACCESS'),
    listen: pick('listen', 'AGENT_RUNNER_LISTEN'),
    blueprints_dir: pick('blueprints-dir', 'AGENT_RUNNER_BLUEPRINTS_DIR'),
    insecure: values.insecure === true ? '1' : pick('insecure', 'AGENT_RUNNER_INSECURE'),
    ca: pick('ca', 'AGENT_RUNNER_CA'),
    cert: pick('cert', 'AGENT_RUNNER_CERT'),
    key: pick('key', 'AGENT_RUNNER_KEY'),
    provider_auth: pick('provider-auth', 'AGENT_RUNNER_PROVIDER_AUTH'),
  });
  if (!parsed.success) return { ok: false, message: `invalid runner configuration: ${describeZodError(parsed.error)}\n${USAGE}` };
  const config: RunnerConfig = parsed.data;
  const tls: TlsMaterial = {};
  for (const field of ['ca', 'cert', 'key'] as const) {
    const file = config[field];
    if (file === undefined) continue;
    try {
      tls[field] = fs.readFileSync(file);
    } catch (err) {
      return { ok: false, message: `invalid runner configuration: ${field}: cannot read ${file} (${errorText(err)})` };
    }
  }
  if (Object.keys(tls).length > 0) config.tls = tls;
  return { ok: true, config };
}

import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { describeZodError } from '../protocol';

/** Default concurrency of one runner: a laptop copes with this many shells/agents at once. */
export const DEFAULT_CAPACITY = 8;

/** Comma-separated list from a flag or an environment variable; blanks dropped. */
const csv = (item: z.ZodString, max: number) =>
  z
    .string()
    .default('')
    .transform((v) => v.split(',').map((x) => x.trim()).filter((x) => x.length > 0))
    .pipe(z.array(item).max(max));

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
  repo_access: csv(z.string().max(500, 'a pattern is at most 500 characters'), 200),
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
});
export type RunnerConfig = z.infer<typeof RunnerConfigSchema>;
export type RunnerConfigInput = z.input<typeof RunnerConfigSchema>;

export type ConfigResult = { ok: true; config: RunnerConfig } | { ok: false; message: string; help?: boolean };

export const USAGE = `usage: node --import tsx runner/index.ts --server URL --token TOKEN [--name NAME] [--data-dir DIR] [--capacity N]
       [--labels a,b] [--repo-access PATTERN[,PATTERN]] [--listen PORT] [--blueprints-dir DIR] [--provider-auth claude,codex,gemini]
  env fallbacks: AGENT_RUNNER_SERVER, AGENT_RUNNER_TOKEN, AGENT_RUNNER_NAME, AGENT_RUNNER_DATA_DIR (default ~/.agent-runner), AGENT_RUNNER_CAPACITY (default ${DEFAULT_CAPACITY}),
  AGENT_RUNNER_LABELS, AGENT_RUNNER_REPO_ACCESS (globs over the repository source; empty or * = any), AGENT_RUNNER_LISTEN (HTTP on 127.0.0.1, Bearer = the runner token),
  AGENT_RUNNER_BLUEPRINTS_DIR (deterministic agents' *.json blueprints; default <data-dir>/blueprints),
  AGENT_RUNNER_PROVIDER_AUTH (share your own sign-in file of these CLIs, read-only, with sessions)`;

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
        'provider-auth': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { ok: false, message: `${err instanceof Error ? err.message : String(err)}\n${USAGE}` };
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
    provider_auth: pick('provider-auth', 'AGENT_RUNNER_PROVIDER_AUTH'),
  });
  if (!parsed.success) return { ok: false, message: `invalid runner configuration: ${describeZodError(parsed.error)}\n${USAGE}` };
  return { ok: true, config: parsed.data };
}

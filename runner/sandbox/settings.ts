import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { describeZodError } from '../../protocol';
import type { Logger } from '../log';
import { hiddenPaths, NO_SANDBOX, probeSandbox, type SandboxSupport } from './index';

/**
 * The sandbox's own settings, from the runner's environment (parsed with zod at start-up):
 * - AGENT_RUNNER_SANDBOX: auto (default: use bubblewrap when it works, else run unsandboxed and
 *   say so loudly), required (refuse to start without it), off (never; for debugging).
 * - AGENT_RUNNER_PRIVATE_PATHS: more paths no session may see, comma-separated (the attached
 *   runner gets the control plane's DATA_DIR here).
 */
/** The sandbox is required (AGENT_RUNNER_SANDBOX=required) and unavailable: the runner does not start. */
export class SandboxUnavailableError extends Error {}

export const SandboxEnvSchema = z.object({
  AGENT_RUNNER_SANDBOX: z.enum(['auto', 'required', 'off'], { error: 'must be auto, required or off' }).default('auto'),
  AGENT_RUNNER_PRIVATE_PATHS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.string().refine((p) => path.isAbsolute(p), 'each path must be absolute')).max(100)),
});
export type SandboxEnv = z.infer<typeof SandboxEnvSchema>;

export function parseSandboxEnv(env: Record<string, string | undefined>): SandboxEnv {
  const parsed = SandboxEnvSchema.safeParse({
    AGENT_RUNNER_SANDBOX: env.AGENT_RUNNER_SANDBOX || undefined,
    AGENT_RUNNER_PRIVATE_PATHS: env.AGENT_RUNNER_PRIVATE_PATHS || undefined,
  });
  if (!parsed.success) throw new Error(`invalid sandbox settings: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** Probes once and logs what holds; throws when the sandbox is required and missing. */
export async function setUpSandbox(opts: { dataDir: string; env: SandboxEnv; log: Logger; bwrap?: string }): Promise<SandboxSupport> {
  const { env, log } = opts;
  if (env.AGENT_RUNNER_SANDBOX === 'off') {
    log.warn('sandbox: OFF (AGENT_RUNNER_SANDBOX=off): sessions see this machine as the runner does, egress is open');
    return NO_SANDBOX;
  }
  const hidden = hiddenPaths(opts.dataDir, env.AGENT_RUNNER_PRIVATE_PATHS);
  // The filter file lives in a private directory of its own (not the data dir, which sessions cannot see).
  const dir = path.join(os.tmpdir(), `av-sandbox-${process.getuid?.() ?? 'u'}-${process.pid}`);
  const support = await probeSandbox({ dir, hidden, bwrap: opts.bwrap });
  if (support.available) {
    log.info(`sandbox: ${support.why}; hidden from sessions: ${hidden.filter((h) => !h.startsWith(os.homedir() + path.sep)).join(', ')} and the runner user's credential files`);
    if (!support.seccompFile) log.warn('sandbox: running WITHOUT a seccomp filter (see above)');
    return support;
  }
  if (env.AGENT_RUNNER_SANDBOX === 'required') throw new SandboxUnavailableError(`sandbox required (AGENT_RUNNER_SANDBOX=required) but unavailable: ${support.why}`);
  log.error(
    `sandbox: UNAVAILABLE — ${support.why}. Sessions run WITHOUT a sandbox: they can read what this runner's OS user can read, ` +
      'see its processes, and reach the network. Enable user namespaces or install bubblewrap (README, "Threat model").',
  );
  return support;
}

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import type { CreateSessionCommand, ProviderId } from '../../protocol';
import { AV_HOOK_PATH, hookEnv } from '../hooks';
import { bashQuote } from '../pty/clean-env';
import type { ProviderDetection, ProviderLaunchContext } from './types';

/** The runner's environment (or a test's stand-in), read only for PATH, HOME and the AGENT_RUNNER_*_BIN overrides. */
export type EnvLike = Record<string, string | undefined>;

/** `--version` of a CLI that needs longer than this is broken for our purposes. */
export const VERSION_TIMEOUT_MS = 10_000;
/** Where adapters keep what they write into a session's home. */
export const SESSION_CONFIG_DIR = '.agent-village';

/** AGENT_RUNNER_CLAUDE_BIN etc.: a fixed binary for this provider (tests point it at the fake agent). */
export function binOverrideEnv(id: ProviderId): string {
  return `AGENT_RUNNER_${id.toUpperCase()}_BIN`;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The override from the environment, else the first `name` on PATH; null when there is none. */
export function resolveBinary(id: ProviderId, name: string, env: EnvLike = process.env): string | null {
  const override = env[binOverrideEnv(id)];
  if (override) return isExecutable(override) ? path.resolve(override) : null;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/** "2.1.197 (Claude Code)", "codex-cli 0.169.0", "0.61.0" → the version number. */
export function parseVersion(output: string): string | undefined {
  const line = output.split('\n').find((l) => l.trim())?.trim();
  if (!line) return undefined;
  return (/\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?/.exec(line)?.[0] ?? line).slice(0, 200);
}

/** Runs `<bin> --version`; a binary that exists but cannot say its version is still available. */
export function detectBinary(id: ProviderId, name: string, env: EnvLike = process.env): Promise<ProviderDetection> {
  const bin = resolveBinary(id, name, env);
  if (!bin) return Promise.resolve({ available: false });
  return new Promise((resolve) => {
    execFile(bin, ['--version'], { timeout: VERSION_TIMEOUT_MS, encoding: 'utf8', env: { PATH: env.PATH ?? '', HOME: env.HOME ?? '' } as unknown as NodeJS.ProcessEnv }, (err, stdout) => {
      resolve({ available: true, path: bin, version: err ? undefined : parseVersion(stdout) });
    });
  });
}

/** The task as the agent's first prompt: title, goal, constraints, acceptance criteria. */
export function renderTaskPrompt(task: CreateSessionCommand['task']): string {
  const parts: string[] = [];
  const title = task.title.trim();
  const goal = task.goal?.trim();
  if (title) parts.push(title);
  if (goal && goal !== title) parts.push(goal);
  if (task.constraints?.length) parts.push(['Constraints:', ...task.constraints.map((c) => `- ${c}`)].join('\n'));
  if (task.acceptance?.length) parts.push(['Done when:', ...task.acceptance.map((a) => `- ${a}`)].join('\n'));
  return parts.join('\n\n');
}

/** The shell command a CLI's hook config runs: absolute node and av-hook.mjs, so PATH cannot swap them. */
export function hookCommand(...args: string[]): string {
  return [process.execPath, AV_HOOK_PATH, ...args].map(bashQuote).join(' ');
}

/**
 * The launch environment: the org's secrets, then the clean env, the hook channel and the
 * adapter's own settings on top, so a secret can add API keys but never replace PATH or HOME.
 * The provider's credentials come last: they are the one part of the org's secrets the
 * provider process gets by design (ProviderLaunch.providerCredentials).
 */
export function launchEnv(ctx: ProviderLaunchContext, own: Record<string, string> = {}, credentials: Record<string, string> = {}): Record<string, string> {
  return { ...(ctx.secrets ?? {}), ...ctx.env, ...(ctx.hook ? hookEnv(ctx.hook) : {}), ...own, ...credentials };
}

/** The org secrets named like the provider's credential variables (first name that is set wins the order). */
export function pickCredentials(ctx: ProviderLaunchContext, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = ctx.credentialSource?.[name] ?? ctx.secrets?.[name];
    if (v) out[name] = v;
  }
  return out;
}

/** The version a CLI reported is inside the range its adapter was written for (null: cannot tell). */
export function versionSupported(version: string | null | undefined, range: string | null): boolean | null {
  if (!range) return true;
  const v = version ? semver.coerce(version, { includePrerelease: true }) : null;
  if (!v) return null;
  return semver.satisfies(v, range, { includePrerelease: true });
}

export async function writeSessionFile(file: string, content: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // 0600: the files may name the hook endpoint; only the session's user reads them.
  await fs.promises.writeFile(file, content, { mode: 0o600 });
}

import type { ProviderId, ProviderInfo } from '../../protocol';
import { errorMessage, type Logger } from '../log';
import { claudeProvider } from './claude';
import { codexProvider } from './codex';
import { geminiProvider } from './gemini';
import { shellProvider } from './shell';
import { versionSupported } from './cli';
import type { ProviderAdapter, ProviderAdapterOptions } from './types';

export type { ProviderAdapter, ProviderAdapterOptions, ProviderCapabilities, ProviderDetection, ProviderLaunch, ProviderLaunchContext } from './types';
export { AUTH_PROVIDERS, isAuthProvider } from './auth-files';
export { ScreenWatch, type ScreenGate } from './screen-watch';
export { shellProvider } from './shell';
export { claudeProvider } from './claude';
export { codexProvider } from './codex';
export { geminiProvider } from './gemini';

/** Adapters this runner knows about; each is offered only if its CLI is found. */
export function defaultProviders(opts: ProviderAdapterOptions = {}): ProviderAdapter[] {
  return [shellProvider(), claudeProvider(process.env, opts), codexProvider(process.env, opts), geminiProvider(process.env, opts)];
}

export interface DetectedProviders {
  /** The adapters whose CLI is installed, keyed by id. */
  providers: Map<ProviderId, ProviderAdapter>;
  /** Their versions, for RunnerRegister.provider_info (sorted by id). */
  info: ProviderInfo[];
}

/** Detects every adapter; a detection that throws counts as "not found". */
export async function detectAll(adapters: ProviderAdapter[], log: Logger): Promise<DetectedProviders> {
  const providers = new Map<ProviderId, ProviderAdapter>();
  const infos = new Map<ProviderId, ProviderInfo>();
  await Promise.all(
    adapters.map(async (a) => {
      try {
        const d = await a.detect();
        if (d.available) {
          providers.set(a.id, a);
          const version = d.version ?? null;
          const supported = versionSupported(version, a.versionRange);
          infos.set(a.id, { id: a.id, version, version_range: a.versionRange, version_supported: supported, ...(a.sharesAuthFile ? { shares_auth_file: true } : {}) });
          log.info(`provider ${a.id} available${d.version ? ` (${d.version})` : ''}${d.path ? ` at ${d.path}` : ''}`);
          if (supported === false) log.warn(`provider ${a.id} ${version} is outside the versions its adapter was written for (${a.versionRange}); flags and hook formats may have changed`);
        } else {
          log.info(`provider ${a.id} not found`);
        }
      } catch (err) {
        log.warn(`provider ${a.id} detection failed: ${errorMessage(err)}`);
      }
    }),
  );
  const info = [...infos.values()].sort((a, b) => a.id.localeCompare(b.id));
  return { providers, info };
}

/** The adapters whose CLI is actually installed, keyed by id. */
export async function detectProviders(adapters: ProviderAdapter[], log: Logger): Promise<Map<ProviderId, ProviderAdapter>> {
  return (await detectAll(adapters, log)).providers;
}

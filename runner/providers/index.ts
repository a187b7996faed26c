import type { ProviderId, ProviderInfo } from '../../protocol';
import { errorMessage, type Logger } from '../log';
import { claudeProvider } from './claude';
import { codexProvider } from './codex';
import { geminiProvider } from './gemini';
import { shellProvider } from './shell';
import type { ProviderAdapter } from './types';

export type { ProviderAdapter, ProviderCapabilities, ProviderDetection, ProviderLaunch, ProviderLaunchContext } from './types';
export { shellProvider } from './shell';
export { claudeProvider } from './claude';
export { codexProvider } from './codex';
export { geminiProvider } from './gemini';

/** Adapters this runner knows about; each is offered only if its CLI is found. */
export function defaultProviders(): ProviderAdapter[] {
  return [shellProvider(), claudeProvider(), codexProvider(), geminiProvider()];
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
  const versions = new Map<ProviderId, string | null>();
  await Promise.all(
    adapters.map(async (a) => {
      try {
        const d = await a.detect();
        if (d.available) {
          providers.set(a.id, a);
          versions.set(a.id, d.version ?? null);
          log.info(`provider ${a.id} available${d.version ? ` (${d.version})` : ''}${d.path ? ` at ${d.path}` : ''}`);
        } else {
          log.info(`provider ${a.id} not found`);
        }
      } catch (err) {
        log.warn(`provider ${a.id} detection failed: ${errorMessage(err)}`);
      }
    }),
  );
  const info = [...versions].map(([id, version]) => ({ id, version })).sort((a, b) => a.id.localeCompare(b.id));
  return { providers, info };
}

/** The adapters whose CLI is actually installed, keyed by id. */
export async function detectProviders(adapters: ProviderAdapter[], log: Logger): Promise<Map<ProviderId, ProviderAdapter>> {
  return (await detectAll(adapters, log)).providers;
}

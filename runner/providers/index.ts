import type { ProviderId } from '../../protocol';
import { errorMessage, type Logger } from '../log';
import { shellProvider } from './shell';
import type { ProviderAdapter } from './types';

export type { ProviderAdapter, ProviderDetection, ProviderLaunch, ProviderLaunchContext } from './types';
export { shellProvider } from './shell';

/** Adapters this runner knows about; claude/codex/gemini join here once they exist. */
export function defaultProviders(): ProviderAdapter[] {
  return [shellProvider()];
}

/** The adapters whose CLI is actually installed, keyed by id. */
export async function detectProviders(adapters: ProviderAdapter[], log: Logger): Promise<Map<ProviderId, ProviderAdapter>> {
  const found = new Map<ProviderId, ProviderAdapter>();
  await Promise.all(
    adapters.map(async (a) => {
      try {
        const d = await a.detect();
        if (d.available) {
          found.set(a.id, a);
          log.info(`provider ${a.id} available${d.version ? ` (${d.version})` : ''}`);
        } else {
          log.info(`provider ${a.id} not found`);
        }
      } catch (err) {
        log.warn(`provider ${a.id} detection failed: ${errorMessage(err)}`);
      }
    }),
  );
  return found;
}

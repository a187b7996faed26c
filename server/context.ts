import type { Services } from './services';

/**
 * Next.js bundles route handlers separately from the custom server, so a module-level singleton
 * would exist twice. The server puts its services on globalThis once; handlers read them here.
 */
const KEY = Symbol.for('agent-village.services');

export function setServices(services: Services): void {
  (globalThis as Record<symbol, unknown>)[KEY] = services;
}

export function getServices(): Services {
  const s = (globalThis as Record<symbol, unknown>)[KEY] as Services | undefined;
  if (!s) throw new Error('The control plane is not started (route handler called outside server/index.ts).');
  return s;
}

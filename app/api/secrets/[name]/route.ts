import { SecretBodySchema, SecretInjectBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// PUT /api/secrets/:name – save a secret (encrypted at rest; masked in sessions; reached through av-secret)
export const PUT = route({ role: 'admin', body: SecretBodySchema }, async ({ services, principal, params, body }) => {
  await services.secrets.set(principal, params.name!, body.value);
  return null;
});

// PATCH /api/secrets/:name – inject into sessions' environment, or not (admins, audited)
export const PATCH = route({ role: 'admin', body: SecretInjectBodySchema }, async ({ services, principal, params, body }) => {
  await services.secrets.setInjection(principal, params.name!, body.inject_into_sessions);
  return null;
});

// DELETE /api/secrets/:name
export const DELETE = route({ role: 'admin' }, async ({ services, principal, params }) => {
  await services.secrets.remove(principal, params.name!);
  return null;
});

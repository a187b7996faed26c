import { SecretBodySchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// PUT /api/secrets/:name – save a secret (encrypted at rest; injected into the org's sessions)
export const PUT = route({ role: 'admin', body: SecretBodySchema }, async ({ services, principal, params, body }) => {
  await services.secrets.set(principal, params.name!, body.value);
  return null;
});

// DELETE /api/secrets/:name
export const DELETE = route({ role: 'admin' }, async ({ services, principal, params }) => {
  await services.secrets.remove(principal, params.name!);
  return null;
});

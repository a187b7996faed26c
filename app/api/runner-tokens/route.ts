import { CreateRunnerTokenBodySchema } from '../../../protocol';
import { actorOf } from '../../../server/services/audit';
import { route } from '../_lib/route';

// GET /api/runner-tokens – tokens of the org (never the secret)
export const GET = route({ role: 'admin' }, async ({ services, principal }) => services.runners.listTokens(principal.orgId));

// POST /api/runner-tokens – a new token for a remote runner, shown once
export const POST = route({ role: 'admin', body: CreateRunnerTokenBodySchema }, async ({ services, principal, body, ip }) =>
  services.runners.createToken(principal.orgId, body.name, actorOf(principal), ip),
);

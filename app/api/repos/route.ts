import { AddRepoBodySchema } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/repos – the org's repositories
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.repos.list(principal.orgId));

// POST /api/repos – add a repository by local path or git URL; a runner scans it into a building
export const POST = route({ role: 'admin', body: AddRepoBodySchema }, async ({ services, principal, body }) =>
  services.repos.add(principal.orgId, body.source, body.name),
);

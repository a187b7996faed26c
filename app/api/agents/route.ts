import type { AgentCatalog } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/agents – the org's deterministic agents (blueprints of connected runners) and skipped blueprint files
export const GET = route({ role: 'viewer' }, async ({ services, principal }): Promise<AgentCatalog> => services.blueprints.catalog(principal.orgId));

import type { WorldSnapshot } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/world – everything the village draws: repositories, live sessions, runners, open alerts, health, the workshop's agents and runs
export const GET = route({ role: 'viewer' }, async ({ services, principal }): Promise<WorldSnapshot> => {
  const [repos, sessions, runners, alerts, health, catalog, runs] = await Promise.all([
    services.repos.list(principal.orgId),
    services.sessions.list(principal.orgId),
    services.runners.list(principal.orgId),
    services.alerts.listOpen(principal.orgId),
    services.alerts.healthAll(principal.orgId),
    services.blueprints.catalog(principal.orgId),
    services.runs.recent(principal.orgId),
  ]);
  return { org: { id: principal.orgId, name: principal.orgName }, repos, sessions, runners, alerts, health, agents: catalog.agents, runs };
});

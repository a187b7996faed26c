import { route } from '../../../_lib/route';

// POST /api/sessions/:id/resume – continue a paused session (SIGCONT)
export const POST = route({ role: 'operator' }, async ({ services, principal, params }) =>
  services.sessions.control(principal, params.id!, 'resume'),
);

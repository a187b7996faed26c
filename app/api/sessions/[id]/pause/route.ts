import { route } from '../../../_lib/route';

// POST /api/sessions/:id/pause – stop the session's processes where they stand (SIGSTOP); usage stops
export const POST = route({ role: 'operator' }, async ({ services, principal, params }) =>
  services.sessions.control(principal, params.id!, 'pause'),
);

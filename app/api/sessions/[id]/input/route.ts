import { z } from 'zod';
import { route } from '../../../_lib/route';

const InputBodySchema = z.object({ data: z.string().min(1).max(65536) });

// POST /api/sessions/:id/input – send keystrokes to the session's terminal (for scripts)
export const POST = route({ role: 'operator', body: InputBodySchema }, async ({ services, principal, params, body }) => {
  await services.sessions.input(principal, params.id!, body.data);
  return null;
});

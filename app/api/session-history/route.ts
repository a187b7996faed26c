import { SessionHistoryQuerySchema, describeZodError } from '../../../protocol';
import { errorResponse, route } from '../_lib/route';

// GET /api/session-history?repo_id=&room_path=&limit= – ended sessions, newest first (per building or room)
export const GET = route({ role: 'viewer' }, async ({ req, services, principal }) => {
  const q = SessionHistoryQuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(q.error) });
  return services.stories.history(principal, q.data);
});

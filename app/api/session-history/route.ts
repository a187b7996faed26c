import { SessionHistoryQuerySchema } from '../../../protocol';
import { route } from '../_lib/route';
import { AppError } from '../../../server/services/errors';

// GET /api/session-history?repo_id=&room_path=&limit= – ended sessions, newest first (per building or room)
export const GET = route({ role: 'viewer' }, async ({ req, services, principal }) => {
  const q = SessionHistoryQuerySchema.safeParse(Object.fromEntries(req.nextUrl.searchParams));
  if (!q.success) throw new AppError('BAD_REQUEST', `Bad query: ${q.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return services.stories.history(principal, q.data);
});

import { z } from 'zod';
import { route } from '../../_lib/route';

const ReadBodySchema = z.object({ id: z.string().min(1).max(100).optional() });

// POST /api/notifications/read – mark one entry (or, without id, all) read
export const POST = route({ role: 'viewer', body: ReadBodySchema }, async ({ services, principal, body }) => services.notifications.markRead(principal, body.id));

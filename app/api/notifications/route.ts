import { route } from '../_lib/route';

// GET /api/notifications – my inbox (newest first) and how many are unread
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.notifications.inbox(principal));

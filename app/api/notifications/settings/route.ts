import { NotificationSettingsSchema } from '../../../../protocol';
import { route } from '../../_lib/route';

// GET /api/notifications/settings – what I am told about
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => services.notifications.settings(principal));

// PUT /api/notifications/settings – change it (per user, per org)
export const PUT = route({ role: 'viewer', body: NotificationSettingsSchema }, async ({ services, principal, body }) => services.notifications.saveSettings(principal, body));

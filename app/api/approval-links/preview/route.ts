import { z } from 'zod';
import { route } from '../../_lib/route';

const PreviewBodySchema = z.object({ token: z.string().min(10).max(2000) });

// POST /api/approval-links/preview – what a one-time link would decide (nothing is used up); the token is the credential
export const POST = route({ role: 'public', body: PreviewBodySchema }, async ({ services, body }) => services.approvalLinks.preview(body.token));

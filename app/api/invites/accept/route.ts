import { NextResponse } from 'next/server';
import { AcceptInviteBodySchema } from '../../../../protocol';
import { errorResponse, route, withSessionCookie } from '../../_lib/route';

// GET /api/invites/accept?token=… – what an invite link is for (email, org, role), before accepting it
export const GET = route({ role: 'public' }, async ({ req, services }) => {
  const token = req.nextUrl.searchParams.get('token');
  if (!token || token.length > 200) return errorResponse({ code: 'BAD_REQUEST', message: 'token: missing' });
  return services.members.previewInvite(token);
});

// POST /api/invites/accept – set name and password (or join with an existing account) and log in
export const POST = route({ role: 'public', body: AcceptInviteBodySchema }, async ({ req, services, body, ip }) => {
  const { token, expiresAt } = await services.members.acceptInvite(body.token, body.name, body.password, { ip });
  return withSessionCookie(NextResponse.json({ ok: true, data: null }), req, token, expiresAt);
});

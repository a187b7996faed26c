import { NextResponse } from 'next/server';
import { ChangePasswordBodySchema } from '../../../../protocol';
import { route, withSessionCookie } from '../../_lib/route';

// POST /api/auth/password – change the signed-in user's password; every other login of theirs ends
export const POST = route({ role: 'viewer', body: ChangePasswordBodySchema, pendingPassword: true }, async ({ req, services, principal, body, ip }) => {
  const { token, expiresAt } = await services.auth.changePassword(principal, body.current_password, body.new_password, ip);
  return withSessionCookie(NextResponse.json({ ok: true, data: null }), req, token, expiresAt);
});

import { NextResponse } from 'next/server';
import { SESSION_COOKIE } from '../../../../server/services/auth';
import { route } from '../../_lib/route';

// POST /api/auth/logout – end this login session
export const POST = route({ role: 'public' }, async ({ req, services }) => {
  const token = req.cookies.get(SESSION_COOKIE)?.value;
  if (token) await services.auth.logout(token);
  const res = NextResponse.json({ ok: true, data: null });
  res.cookies.delete(SESSION_COOKIE);
  return res;
});

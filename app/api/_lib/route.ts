import { NextResponse, type NextRequest } from 'next/server';
import type { z } from 'zod';
import { describeZodError, HTTP_STATUS, type ApiError, type Role } from '../../../protocol';
import { getServices } from '../../../server/context';
import type { Services } from '../../../server/services';
import { requireRole, SESSION_COOKIE, type Principal } from '../../../server/services/auth';
import { isAppError } from '../../../server/services/errors';
import { shownMessage } from '../../../server/services/viewer-text';
import { getOriginPolicy } from '../../../server/origin-policy';
import { BodyTooLargeError, JSON_BODY_LIMIT_BYTES, readBodyLimited } from './body';

type Ctx<B> = { req: NextRequest; services: Services; principal: Principal; body: B; params: Record<string, string>; ip: string | null };

/** The header server/index.ts sets from the socket's address (overwriting anything a client sent). */
export const REMOTE_ADDR_HEADER = 'x-av-remote-addr';

/** JSON error response with the status for its code (and Retry-After when the error says when). */
export function errorResponse(error: ApiError, retryAfterS?: number): NextResponse {
  const headers = retryAfterS !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterS))) } : undefined;
  return NextResponse.json({ ok: false, error }, { status: HTTP_STATUS[error.code], headers });
}

/**
 * A state change with a cookie must come from our own pages (CSRF): the Origin must be one of
 * this server's public origins (PUBLIC_URL or loopback), not merely equal to the Host it sent.
 */
function crossSite(req: NextRequest): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const origin = req.headers.get('origin');
  if (!origin) return req.headers.get('sec-fetch-site') === 'cross-site';
  return !getOriginPolicy().originAllowed(origin);
}

/**
 * The steps of every route handler: CSRF check → authenticate → role → parse the body → call a
 * service → respond. Known errors keep their message; unknown ones are logged and never echoed.
 */
export function route<S extends z.ZodType | undefined, T>(
  /** `pendingPassword`: also open to an account that still has to replace its one-time password. */
  opts: { role: Role | 'public'; body?: S; pendingPassword?: boolean; maxBodyBytes?: number },
  fn: (ctx: Ctx<S extends z.ZodType ? z.infer<S> : undefined>) => Promise<T | NextResponse>,
) {
  return async (req: NextRequest, context: { params: Promise<Record<string, string>> }): Promise<NextResponse> => {
    try {
      if (crossSite(req)) return errorResponse({ code: 'FORBIDDEN', message: 'Cross-site request refused.' });
      const services = getServices();
      let principal = null as Principal | null;
      if (opts.role !== 'public') {
        principal = await services.auth.principalFromToken(req.cookies.get(SESSION_COOKIE)?.value);
        if (!principal) return errorResponse({ code: 'UNAUTHORIZED', message: 'Log in first.' });
        if (principal.mustChangePassword && !opts.pendingPassword) {
          return errorResponse({ code: 'FORBIDDEN', message: 'Change your one-time password first (/password).' });
        }
        requireRole(principal, opts.role);
      }
      let body: unknown = undefined;
      if (opts.body) {
        let raw: unknown;
        try {
          raw = JSON.parse((await readBodyLimited(req, opts.maxBodyBytes ?? JSON_BODY_LIMIT_BYTES)).toString('utf8'));
        } catch (err) {
          if (err instanceof BodyTooLargeError) return errorResponse({ code: 'PAYLOAD_TOO_LARGE', message: err.message });
          return errorResponse({ code: 'BAD_REQUEST', message: 'The request body must be JSON.' });
        }
        const parsed = opts.body.safeParse(raw);
        if (!parsed.success) return errorResponse({ code: 'BAD_REQUEST', message: describeZodError(parsed.error) });
        body = parsed.data;
      }
      const params = (await context?.params) ?? {};
      const ip = req.headers.get(REMOTE_ADDR_HEADER);
      const result = await fn({ req, services, principal: principal!, body: body as never, params, ip });
      if (result instanceof NextResponse) return result;
      return NextResponse.json({ ok: true, data: result ?? null });
    } catch (err) {
      if (isAppError(err)) {
        const { issues, retryAfterS } = err as { issues?: ApiError['issues']; retryAfterS?: number };
        return errorResponse({ code: err.code, message: shownMessage(err.code, err.userMessage), ...(issues ? { issues } : {}) }, retryAfterS);
      }
      console.error(`[server] ${req.method} ${req.nextUrl.pathname} failed:`, err);
      return errorResponse({ code: 'INTERNAL', message: 'Something went wrong on the server; the error was logged.' });
    }
  };
}

export function withSessionCookie(res: NextResponse, req: NextRequest, token: string, expiresAt: Date): NextResponse {
  res.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: req.nextUrl.protocol === 'https:',
    path: '/',
    expires: expiresAt,
  });
  return res;
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OriginPolicy } from './origin-policy';

/**
 * Content-Security-Policy for every page. Next.js streams its payload in inline <script> tags
 * without a nonce on statically rendered pages, so scripts are 'self' + 'unsafe-inline' (no
 * remote origin can inject a script). No eval in production: the workshop validates JSON Schema with an
 * interpreter (components/workshop/validate.ts) and pixi uses its eval-free shader module. Frames are
 * refused everywhere (clickjacking), and the page talks only to this origin (fetch and Socket.IO).
 */
export function contentSecurityPolicy(dev: boolean): string {
  return [
    "default-src 'self'",
    // Dev mode only: React's development build and Next's hot reload evaluate code (call stacks,
    // refreshed modules). A production build never does.
    `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ''}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers on every response, API and pages alike. */
export function securityHeaders(dev: boolean): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(dev),
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    // The setup link carries its token in the query: never send URLs to other sites.
    'Referrer-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  };
}

/** What a request for another Host is told (and the status: 421 Misdirected Request). */
export function wrongHostMessage(host: string | undefined, policy: OriginPolicy): string {
  return `This server answers only for ${policy.origins.join(', ')}; the Host "${host ?? ''}" is not one of them. Set PUBLIC_URL to the address people open.`;
}
export const WRONG_HOST_STATUS = 421;

/**
 * The first step of every HTTP request: security headers, then the Host check. Returns false
 * (and has answered) when the request is refused.
 */
export function guardRequest(req: IncomingMessage, res: ServerResponse, policy: OriginPolicy, headers: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (policy.hostAllowed(req.headers.host)) return true;
  const body = JSON.stringify({ ok: false, error: { code: 'FORBIDDEN', message: wrongHostMessage(req.headers.host, policy) } });
  res.writeHead(WRONG_HOST_STATUS, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  return false;
}

/**
 * Socket.IO's `allowRequest` (every handshake, polling or websocket, /ui and /runner): the Host
 * must be ours, and a browser's Origin too (non-browser clients send none).
 */
export function allowSocketRequest(policy: OriginPolicy) {
  return (req: IncomingMessage, cb: (err: string | null | undefined, ok: boolean) => void) => {
    if (!policy.hostAllowed(req.headers.host)) return cb(wrongHostMessage(req.headers.host, policy), false);
    const origin = req.headers.origin;
    if (origin && !policy.originAllowed(origin)) return cb(`Cross-origin connection from ${origin} refused.`, false);
    cb(null, true);
  };
}

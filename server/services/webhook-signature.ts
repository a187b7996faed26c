import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`
 * keyed with the webhook's secret (docs: "Validating webhook deliveries"). Checked over the exact
 * bytes received, in constant time.
 */
export const SIGNATURE_HEADER = 'x-hub-signature-256';

export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function verifySignature(secret: string, body: string | Buffer, header: string | null | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header.trim())) return false;
  const expected = Buffer.from(signBody(secret, body).slice('sha256='.length), 'hex');
  const given = Buffer.from(header.trim().slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * One spelling per repository location, so a push event's URLs can be matched to a registered
 * source: `https://github.com/Acme/Repo.git`, `git@github.com:Acme/Repo`, `ssh://git@github.com/acme/repo`
 * and `git://github.com/acme/repo` are all `github.com/acme/repo`; a local path (or file:// URL) is
 * the path without a trailing slash or `.git`.
 */
export function canonicalSource(source: string): string {
  const s = source.trim().replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');
  if (s.startsWith('file://')) return s.slice('file://'.length);
  if (s.startsWith('/')) return s;
  const scp = /^[\w.-]+@([\w.-]+):(.+)$/.exec(s);
  if (scp) return `${scp[1]!.toLowerCase()}/${scp[2]!.replace(/^\/+/, '').toLowerCase()}`;
  const url = /^[a-z+]+:\/\/(?:[^@/]+@)?([^/:]+)(?::\d+)?\/(.+)$/i.exec(s);
  if (url) return `${url[1]!.toLowerCase()}/${url[2]!.toLowerCase()}`;
  return s;
}

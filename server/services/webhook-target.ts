import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { AppError } from './errors';
import { isNonPublicAddress, resolveAll } from './source-policy';

/**
 * Where an org's outgoing webhooks may point. A webhook URL is typed by an org admin but fetched
 * by the control plane, from inside its network: without a rule, an admin of one org could make
 * the server POST to its own loopback services, the cloud metadata address (169.254.169.254) or
 * the LAN. So http(s) only, and no loopback, link-local or private address — neither as a literal,
 * nor as what the name resolves to when the webhook is saved, nor at connect time (a name that
 * resolves to a public address when checked and to a private one when delivered is refused too).
 * An installation that posts to a receiver on its LAN allows it with
 * AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS=1.
 */

export const PRIVATE_WEBHOOK_REFUSED = (host: string) =>
  `Webhook URLs on loopback, link-local or private addresses are refused (${host}). An operator can allow them with AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS=1.`;

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

const isLocalName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** Throws BAD_REQUEST saying why a webhook URL may not be used. */
export async function checkWebhookTarget(raw: string, allowPrivate: boolean): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('BAD_REQUEST', 'url: must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AppError('BAD_REQUEST', 'url: must be an http:// or https:// URL');
  if (url.username || url.password) throw new AppError('BAD_REQUEST', 'url: must not carry a user name or password (the body is signed instead)');
  if (allowPrivate) return;
  const host = hostOf(url);
  if (isLocalName(host) || isNonPublicAddress(host)) throw new AppError('BAD_REQUEST', PRIVATE_WEBHOOK_REFUSED(url.hostname));
  if (isIP(host)) return;
  if ((await resolveAll(host)).some(isNonPublicAddress)) throw new AppError('BAD_REQUEST', PRIVATE_WEBHOOK_REFUSED(url.hostname));
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that fails when a name resolves to a non-public address: what the socket connects to is checked. */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad) {
      const refused: NodeJS.ErrnoException = new Error(PRIVATE_WEBHOOK_REFUSED(hostname));
      refused.code = 'EAI_NONPUBLIC';
      return callback(refused, []);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
}

/** The connection pool deliveries use when private targets are not allowed. */
let publicAgent: Agent | null = null;

/**
 * POST a delivery: the same URL rule as when the webhook was saved, checked again now (the URL's
 * name may resolve elsewhere today), and a connection that can only reach public addresses.
 */
export async function postToWebhook(url: string, init: { headers: Record<string, string>; body: string; signal: AbortSignal }, allowPrivate: boolean): Promise<{ status: number }> {
  await checkWebhookTarget(url, allowPrivate);
  publicAgent ??= new Agent({ connect: { lookup: publicOnlyLookup } });
  const res = await undiciFetch(url, { method: 'POST', headers: init.headers, body: init.body, redirect: 'manual', signal: init.signal, ...(allowPrivate ? {} : { dispatcher: publicAgent }) });
  // The body is not ours to keep; reading it frees the connection.
  await res.arrayBuffer().catch(() => undefined);
  return { status: res.status };
}

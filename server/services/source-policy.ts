import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { parseSource } from '../../common/git-url';
import { AppError } from './errors';

/** A name that does not resolve within this time is left to the runner's clone to fail on. */
const DNS_LOOKUP_TIMEOUT_MS = 3_000;

/** Loopback, link-local (cloud metadata at 169.254.169.254), private and other non-public ranges. */
const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  NON_PUBLIC.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  NON_PUBLIC.addSubnet(net, bits, 'ipv6');
}

export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  const kind = isIP(bare);
  return kind === 4 ? NON_PUBLIC.check(bare, 'ipv4') : kind === 6 ? NON_PUBLIC.check(bare, 'ipv6') : false;
}

export const PRIVATE_SOURCE_REFUSED = (host: string) =>
  `Repository sources on loopback, link-local or private addresses are refused (${host}). An operator can allow them with AGENT_VILLAGE_ALLOW_PRIVATE_GIT_HOSTS=1.`;

export async function resolveAll(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((res) => (timer = setTimeout(() => res([]), DNS_LOOKUP_TIMEOUT_MS)));
  try {
    return await Promise.race([lookup(host, { all: true }).then((as) => as.map((a) => a.address)), timeout]);
  } catch {
    return []; // unresolvable here: the clone fails on its own, with its own error
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Policy for a repository source an admin adds: local paths as the existing rules allow
 * (absolute, checked by the runner), git URLs only on public hosts — not loopback, link-local or
 * private addresses, by literal or by what the name resolves to — unless the installation allows
 * them (a self-hosted forge on the LAN). Throws BAD_REQUEST with the reason.
 */
export async function checkRepoSource(source: string, opts: { allowPrivateHosts: boolean }): Promise<void> {
  const parsed = parseSource(source);
  if (!parsed) throw new AppError('BAD_REQUEST', 'source: must be an absolute local path or a git URL (https://, ssh://, git@host:owner/repo)');
  if (parsed.kind === 'local' || opts.allowPrivateHosts) return;
  const host = parsed.host.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) throw new AppError('BAD_REQUEST', PRIVATE_SOURCE_REFUSED(parsed.host));
  if (isIP(host)) return;
  if ((await resolveAll(host)).some(isNonPublicAddress)) throw new AppError('BAD_REQUEST', PRIVATE_SOURCE_REFUSED(parsed.host));
}

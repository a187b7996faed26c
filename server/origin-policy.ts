/**
 * The origins this control plane answers for: the configured public URL (`PUBLIC_URL`) and the
 * loopback names on the port it listens on. Every HTTP request and socket handshake whose Host
 * is not one of them is refused (DNS rebinding: an attacker's name that resolves to this machine
 * still sends its own name as Host), and state changes must come from a page of one of them
 * (Origin). Loopback stays allowed with a PUBLIC_URL: the attached runner and local tools dial
 * 127.0.0.1, and a browser only sends a loopback Host when it really talks to this machine.
 */
export interface OriginPolicy {
  /** Whether a Host header names this server. */
  hostAllowed(host: string | undefined | null): boolean;
  /** Whether an Origin header (scheme://host[:port]) is one of this server's origins. */
  originAllowed(origin: string | undefined | null): boolean;
  /** The public origins, for messages ("http://localhost:3000, …"). */
  readonly origins: readonly string[];
  /** Where people open the village (PUBLIC_URL, or http://localhost:PORT). */
  readonly publicUrl: string;
}

interface Entry {
  protocol: 'http:' | 'https:';
  hostname: string;
  /** Explicit port; the scheme's default when the URL had none. */
  port: string;
}

const DEFAULT_PORT = { 'http:': '80', 'https:': '443' } as const;
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

function entryOf(url: URL): Entry {
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
  return { protocol, hostname: url.hostname.toLowerCase(), port: url.port || DEFAULT_PORT[protocol] };
}

/** "Host: name[:port]" → its parts, or null for anything that is not a plain host. */
function parseHost(host: string): { hostname: string; port: string | null } | null {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(host.trim());
  return m ? { hostname: m[1]!.toLowerCase(), port: m[2] ?? null } : null;
}

/** Wildcard listen addresses name no host of their own. */
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/**
 * `listenHost`: the HOST the server binds; a specific address (not a wildcard) is served too,
 * since that is where the attached runner and local tools dial.
 */
export function createOriginPolicy(opts: { publicUrl?: string | null; port: number; listenHost?: string }): OriginPolicy {
  const names = [...LOOPBACK_NAMES];
  const bound = opts.listenHost?.toLowerCase();
  if (bound && !WILDCARD.has(bound)) names.push(bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound);
  const local = [...new Set(names)];
  const entries: Entry[] = local.map((hostname) => ({ protocol: 'http:', hostname, port: String(opts.port) }));
  // Loopback behind a local TLS terminator is the same machine too.
  entries.push(...local.map((hostname) => ({ protocol: 'https:' as const, hostname, port: String(opts.port) })));
  const pub = opts.publicUrl ? entryOf(new URL(opts.publicUrl)) : null;
  if (pub) entries.unshift(pub);
  const show = (e: Entry) => `${e.protocol}//${e.hostname}${e.port === DEFAULT_PORT[e.protocol] ? '' : `:${e.port}`}`;
  const origins = [...new Set(entries.filter((e) => e === pub || e.protocol === 'http:').map(show))];

  return {
    origins,
    publicUrl: pub ? show(pub) : `http://localhost:${opts.port}`,
    hostAllowed(host) {
      const h = host ? parseHost(host) : null;
      if (!h) return false;
      // A Host without a port means the default port of whichever scheme the client used.
      return entries.some((e) => e.hostname === h.hostname && (h.port ?? DEFAULT_PORT[e.protocol]) === e.port);
    },
    originAllowed(origin) {
      if (!origin) return false;
      let u: URL;
      try {
        u = new URL(origin);
      } catch {
        return false;
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
      const o = entryOf(u);
      return entries.some((e) => e.protocol === o.protocol && e.hostname === o.hostname && e.port === o.port);
    },
  };
}

/**
 * Next.js bundles route handlers apart from the custom server (see context.ts): the server puts
 * the policy on globalThis once it knows its port; route handlers read it here.
 */
const KEY = Symbol.for('agent-village.origin-policy');

export function setOriginPolicy(policy: OriginPolicy): void {
  (globalThis as Record<symbol, unknown>)[KEY] = policy;
}

export function getOriginPolicy(): OriginPolicy {
  const p = (globalThis as Record<symbol, unknown>)[KEY] as OriginPolicy | undefined;
  if (!p) throw new Error('The origin policy is not set (route handler called outside server/index.ts).');
  return p;
}

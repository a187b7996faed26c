import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { errorMessage, type Logger } from '../log';

/**
 * The session's only way out of its network namespace: an HTTP proxy (CONNECT for TLS, absolute
 * URLs for plain HTTP) on a Unix socket that the sandbox gets bind-mounted. Each session has its
 * own proxy, so a refusal is reported in that session's terminal and stream (POLICY_BLOCKED with
 * the host). Hosts are matched by the name the client asked for (the sandbox has no DNS; names
 * are resolved here), so an allowed name cannot be swapped for a refused one.
 */

/** Socket name inside the proxy's private directory. */
export const EGRESS_SOCKET_NAME = 'egress.sock';
/** A refused host is reported once per this window (a retrying client must not flood the stream). */
export const BLOCKED_REPORT_INTERVAL_MS = 10_000;
/** How long the upstream connection may take before the client gets 502. */
const UPSTREAM_CONNECT_TIMEOUT_MS = 15_000;

export interface EgressBlocked {
  host: string;
  port: number;
  /** Whether this refusal should be reported (the first for this host in BLOCKED_REPORT_INTERVAL_MS). */
  report: boolean;
}

/** `host`, `host:port` or `*.domain` (any subdomain); lower-cased; IPv6 literals in brackets. */
export function normalizeAllowEntry(entry: string): string {
  return entry.trim().toLowerCase().replace(/\.$/, '');
}

/** Is host:port allowed by the list? Pure; the tests pin it. */
export function hostAllowed(allow: readonly string[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  for (const raw of allow) {
    const e = normalizeAllowEntry(raw);
    const m = /^(.*?)(?::(\d+))?$/.exec(e.startsWith('[') ? e.replace(/^\[(.*)\](.*)$/, '$1$2') : e);
    if (!m) continue;
    const [, name, p] = m;
    if (p !== undefined && Number(p) !== port) continue;
    if (name === h) return true;
    if (name.startsWith('*.') && h.endsWith(name.slice(1)) && h.length > name.length - 1) return true;
  }
  return false;
}

/** "host:port" from a CONNECT target, or null. */
function parseAuthority(target: string): { host: string; port: number } | null {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target.trim());
  if (!m) return null;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1], port } : null;
}

export class EgressProxy {
  private readonly lastReported = new Map<string, number>();
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly dir: string,
    readonly socket: string,
    private allow: string[],
  ) {}

  /** Starts a proxy on a fresh private socket; `onBlocked` hears every refusal. */
  static async start(opts: { allow: string[]; log: Logger; onBlocked: (b: EgressBlocked) => void; owner?: { uid: number; gid: number } }): Promise<EgressProxy> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'av-egress-'));
    const socket = path.join(dir, EGRESS_SOCKET_NAME);
    let proxy: EgressProxy | null = null;
    const server = http.createServer((req, res) => proxy!.forward(req, res, opts));
    server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => proxy!.tunnel(req, client, head, opts));
    server.on('clientError', (_err, s) => s.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolve());
    });
    proxy = new EgressProxy(server, dir, socket, opts.allow.map(normalizeAllowEntry));
    server.on('connection', (s: net.Socket) => {
      proxy!.sockets.add(s);
      s.on('close', () => proxy!.sockets.delete(s));
    });
    return proxy;
  }

  get allowList(): readonly string[] {
    return this.allow;
  }

  private refuse(host: string, port: number, onBlocked: (b: EgressBlocked) => void): void {
    const key = `${host}:${port}`;
    const now = Date.now();
    const last = this.lastReported.get(key);
    const report = last === undefined || now - last >= BLOCKED_REPORT_INTERVAL_MS;
    if (report) this.lastReported.set(key, now);
    onBlocked({ host, port, report });
  }

  private tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer, opts: { log: Logger; onBlocked: (b: EgressBlocked) => void }): void {
    const target = parseAuthority(req.url ?? '');
    client.on('error', () => client.destroy());
    if (!target) return void client.end('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\nagent-village: CONNECT needs host:port\n');
    if (!hostAllowed(this.allow, target.host, target.port)) {
      this.refuse(target.host, target.port, opts.onBlocked);
      return void client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nagent-village: ${target.host} is not on this session's network allowlist\n`);
    }
    const upstream = net.connect({ host: target.host, port: target.port, timeout: UPSTREAM_CONNECT_TIMEOUT_MS });
    upstream.once('timeout', () => upstream.destroy(new Error('connect timed out')));
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err) => {
      if (!client.writable) return client.destroy();
      client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n\r\nagent-village: ${target.host}:${target.port}: ${errorMessage(err)}\n`);
    });
    client.on('close', () => upstream.destroy());
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse, opts: { onBlocked: (b: EgressBlocked) => void }): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('agent-village: a proxy request needs an absolute http:// URL\n');
    }
    if (url.protocol !== 'http:') return void res.writeHead(400, { 'content-type': 'text/plain' }).end('agent-village: only http:// here; https goes through CONNECT\n');
    const port = url.port ? Number(url.port) : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!hostAllowed(this.allow, host, port)) {
      this.refuse(host, port, opts.onBlocked);
      return void res.writeHead(403, { 'content-type': 'text/plain' }).end(`agent-village: ${host} is not on this session's network allowlist\n`);
    }
    const headers = { ...req.headers };
    for (const h of Object.keys(headers)) if (h.startsWith('proxy-')) delete headers[h];
    const up = http.request({ host, port, method: req.method, path: `${url.pathname}${url.search}`, headers, timeout: UPSTREAM_CONNECT_TIMEOUT_MS }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.on('timeout', () => up.destroy(new Error('timed out')));
    up.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`agent-village: ${host}:${port}: ${errorMessage(err)}\n`);
    });
    req.pipe(up);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }
}

import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger } from '../testing/fixtures';
import { EgressProxy, hostAllowed, type EgressBlocked } from './egress-proxy';

describe('hostAllowed', () => {
  it('matches exact names, host:port and *.domain (subdomains only), case-insensitively', () => {
    const allow = ['registry.npmjs.org', '127.0.0.2', 'api.example.com:8443', '*.corp.example'];
    expect(hostAllowed(allow, 'registry.npmjs.org', 443)).toBe(true);
    expect(hostAllowed(allow, 'REGISTRY.npmjs.org.', 443)).toBe(true);
    expect(hostAllowed(allow, 'evil-registry.npmjs.org', 443)).toBe(false);
    expect(hostAllowed(allow, 'registry.npmjs.org.evil.com', 443)).toBe(false);
    expect(hostAllowed(allow, '127.0.0.2', 8080)).toBe(true);
    expect(hostAllowed(allow, '127.0.0.3', 8080)).toBe(false);
    expect(hostAllowed(allow, 'api.example.com', 8443)).toBe(true);
    expect(hostAllowed(allow, 'api.example.com', 443)).toBe(false);
    expect(hostAllowed(allow, 'git.corp.example', 443)).toBe(true);
    expect(hostAllowed(allow, 'corp.example', 443)).toBe(false);
    expect(hostAllowed([], 'anything', 80)).toBe(false);
  });
});

/** One request through the proxy's Unix socket: CONNECT or an absolute-URL GET. Resolves with the status line and body. */
function viaProxy(socket: string, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(socket);
    let out = '';
    c.on('data', (b) => {
      out += b.toString();
      // A tunnel stays open: once it is established, talk to the far end through it.
      if (out.startsWith('HTTP/1.1 200 Connection Established\r\n\r\n') && !out.includes('tunnel-ok')) c.write('ping\n');
      if (out.includes('tunnel-ok')) c.end();
    });
    c.on('end', () => resolve(out));
    c.on('close', () => resolve(out));
    c.on('error', reject);
    c.write(raw);
  });
}

describe('EgressProxy (real Unix socket, real loopback servers)', () => {
  let proxy: EgressProxy;
  const blocked: EgressBlocked[] = [];
  let web: http.Server;
  let webPort: number;
  let echo: net.Server;
  let echoPort: number;

  beforeAll(async () => {
    web = http.createServer((req, res) => res.end(`web-ok ${req.url}`));
    await new Promise<void>((r) => web.listen(0, '127.0.0.2', () => r()));
    webPort = (web.address() as AddressInfo).port;
    echo = net.createServer((s) => s.once('data', () => s.end('tunnel-ok\n')));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.2', () => r()));
    echoPort = (echo.address() as AddressInfo).port;
    proxy = await EgressProxy.start({ allow: ['127.0.0.2'], log: captureLogger(), onBlocked: (b) => blocked.push(b) });
  });
  afterAll(async () => {
    await proxy.close();
    web.close();
    echo.close();
  });

  it('tunnels CONNECT to an allowed host and forwards plain HTTP to it', async () => {
    const tunnel = await viaProxy(proxy.socket, `CONNECT 127.0.0.2:${echoPort} HTTP/1.1\r\nHost: 127.0.0.2:${echoPort}\r\n\r\n`);
    expect(tunnel).toContain('200 Connection Established');
    expect(tunnel).toContain('tunnel-ok');
    const get = await viaProxy(proxy.socket, `GET http://127.0.0.2:${webPort}/x?y=1 HTTP/1.1\r\nHost: 127.0.0.2\r\nConnection: close\r\n\r\n`);
    expect(get).toMatch(/^HTTP\/1.1 200/);
    expect(get).toContain('web-ok /x?y=1');
  });

  it('refuses another host with 403, reports it once per window, and connects nowhere', async () => {
    let reached = false;
    const other = net.createServer((s) => {
      reached = true;
      s.end();
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.3', () => r()));
    const port = (other.address() as AddressInfo).port;
    try {
      const before = blocked.length;
      const a = await viaProxy(proxy.socket, `CONNECT 127.0.0.3:${port} HTTP/1.1\r\n\r\n`);
      const b = await viaProxy(proxy.socket, `GET http://127.0.0.3:${port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(a).toMatch(/^HTTP\/1.1 403/);
      expect(b).toMatch(/^HTTP\/1.1 403/);
      expect(a).toContain('127.0.0.3 is not on this session');
      const mine = blocked.slice(before);
      expect(mine.map((x) => [x.host, x.port, x.report])).toEqual([
        ['127.0.0.3', port, true],
        ['127.0.0.3', port, false],
      ]);
      expect(reached).toBe(false);
    } finally {
      other.close();
    }
  });

  it('malformed requests get 400 and the proxy keeps serving', async () => {
    expect(await viaProxy(proxy.socket, 'CONNECT nonsense HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1.1 400/);
    expect(await viaProxy(proxy.socket, 'GET /relative HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1.1 400/);
    expect(await viaProxy(proxy.socket, 'garbage\r\n\r\n')).toBe('');
    const get = await viaProxy(proxy.socket, `GET http://127.0.0.2:${webPort}/again HTTP/1.1\r\nHost: 127.0.0.2\r\nConnection: close\r\n\r\n`);
    expect(get).toContain('web-ok /again');
  });
});

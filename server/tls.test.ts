import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createListeningServer, HTTP_KEEP_ALIVE_MS } from './tls';

describe('the listening server', () => {
  let close = () => {};
  afterEach(() => close());

  it('keeps idle connections for a minute and says so, so pooling clients never reuse a socket it is closing', async () => {
    const { server, scheme } = createListeningServer({}, (_req, res) => res.end('ok'));
    expect(scheme).toBe('http');
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => server.close();
    const { port } = server.address() as AddressInfo;
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', path: '/', headers: { connection: 'keep-alive' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers));
      });
      req.on('error', reject);
      req.end();
    });
    // What a client reads: the hint matches the server's own timer (Node derives it from keepAliveTimeout).
    expect(headers['keep-alive']).toBe(`timeout=${HTTP_KEEP_ALIVE_MS / 1000}`);
    expect(server.keepAliveTimeout).toBeGreaterThanOrEqual(60_000);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
  });
});

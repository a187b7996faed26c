import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { io, type Socket } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { framesNeedMasking, runnerTransports } from './connection-transport';

describe('framesNeedMasking', () => {
  it('keeps masking only where an intermediary could read the frames', () => {
    expect(framesNeedMasking('http://control.example.com:3000')).toBe(true);
    expect(framesNeedMasking('http://10.0.0.5:3000')).toBe(true);
    expect(framesNeedMasking('http://[2001:db8::1]:3000')).toBe(true);
    expect(framesNeedMasking('not a url')).toBe(true);
    expect(framesNeedMasking('https://control.example.com')).toBe(false);
    expect(framesNeedMasking('http://127.0.0.1:3000')).toBe(false);
    expect(framesNeedMasking('http://127.1.2.3:3000')).toBe(false);
    expect(framesNeedMasking('http://localhost:3000')).toBe(false);
    expect(framesNeedMasking('http://[::1]:3000')).toBe(false);
  });
});

describe('the runner link websocket', () => {
  let http: HttpServer | null = null;
  let server: Server | null = null;
  let client: Socket | null = null;

  afterEach(async () => {
    client?.close();
    await server?.close();
    http = server = client = null;
  });

  /** A socket.io server on loopback that records every byte it reads off its TCP sockets. */
  async function recordingServer(onFrame: (data: Buffer) => void): Promise<{ url: string; wire: () => Buffer }> {
    http = createServer();
    const chunks: Buffer[] = [];
    http.on('connection', (socket) => socket.on('data', (d: Buffer) => chunks.push(d)));
    server = new Server(http, { transports: ['websocket'] });
    server.on('connection', (socket) =>
      socket.on('frame', (data: unknown, ack: (n: number) => void) => {
        onFrame(data as Buffer);
        ack((data as Buffer).byteLength);
      }),
    );
    await new Promise<void>((resolve) => http!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, wire: () => Buffer.concat(chunks) };
  }

  async function send(url: string, transports: ReturnType<typeof runnerTransports>, payload: Buffer): Promise<number> {
    client = io(url, { transports, reconnection: false });
    return (await client.timeout(30_000).emitWithAck('frame', payload)) as number;
  }

  const payload = Buffer.from('terminal output that must arrive byte for byte\r\n'.repeat(2_000));

  it('sends binary frames unmasked over loopback, and they arrive intact', async () => {
    const got: Buffer[] = [];
    const { url, wire } = await recordingServer((d) => got.push(d));
    expect(await send(url, runnerTransports(url), payload)).toBe(payload.byteLength);
    expect(Buffer.compare(got[0]!, payload)).toBe(0);
    // The payload crossed the wire as it is: no key XORed into it.
    expect(wire().includes(payload)).toBe(true);
  });

  it('masks them with a random key when told to (plain http to another host)', async () => {
    const got: Buffer[] = [];
    const { url, wire } = await recordingServer((d) => got.push(d));
    expect(await send(url, runnerTransports('http://control.example.com'), payload)).toBe(payload.byteLength);
    expect(Buffer.compare(got[0]!, payload)).toBe(0);
    expect(wire().includes(payload)).toBe(false);
  });
});

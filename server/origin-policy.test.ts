import { describe, expect, it } from 'vitest';
import { parseServerEnv } from './env';
import { createOriginPolicy } from './origin-policy';

describe('origin policy (Host and Origin checks)', () => {
  it('by default serves only the loopback names on its port', () => {
    const p = createOriginPolicy({ port: 3000 });
    for (const h of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', 'LOCALHOST:3000']) expect(p.hostAllowed(h), h).toBe(true);
    for (const h of ['evil.example:3000', 'localhost:3001', 'localhost', '127.0.0.2:3000', '', 'localhost:3000 x', 'a@localhost:3000']) expect(p.hostAllowed(h), h).toBe(false);
    expect(p.hostAllowed(undefined)).toBe(false);
    expect(p.originAllowed('http://localhost:3000')).toBe(true);
    expect(p.originAllowed('http://127.0.0.1:3000')).toBe(true);
    expect(p.originAllowed('http://evil.example:3000')).toBe(false);
    expect(p.originAllowed('null')).toBe(false);
    expect(p.publicUrl).toBe('http://localhost:3000');
  });

  it('with PUBLIC_URL also serves that origin, default ports included', () => {
    const p = createOriginPolicy({ publicUrl: 'https://village.example.com', port: 3000 });
    expect(p.hostAllowed('village.example.com')).toBe(true);
    expect(p.hostAllowed('village.example.com:443')).toBe(true);
    expect(p.hostAllowed('village.example.com:3000')).toBe(false);
    expect(p.hostAllowed('localhost:3000')).toBe(true);
    expect(p.originAllowed('https://village.example.com')).toBe(true);
    expect(p.originAllowed('http://village.example.com')).toBe(false);
    expect(p.publicUrl).toBe('https://village.example.com');
    expect(p.origins[0]).toBe('https://village.example.com');
  });

  it('a specific listen address is served; a wildcard is not a name', () => {
    expect(createOriginPolicy({ port: 80, listenHost: '192.168.1.5' }).hostAllowed('192.168.1.5')).toBe(true);
    expect(createOriginPolicy({ port: 80, listenHost: '0.0.0.0' }).hostAllowed('0.0.0.0')).toBe(false);
  });

  it('PUBLIC_URL is parsed at start with a clear message', () => {
    const env = (PUBLIC_URL: string) => ({ NODE_ENV: 'test', PUBLIC_URL }) as NodeJS.ProcessEnv;
    expect(parseServerEnv(env('https://village.example.com')).PUBLIC_URL).toBe('https://village.example.com');
    expect(parseServerEnv(env('')).PUBLIC_URL).toBeUndefined();
    expect(() => parseServerEnv(env('village.example.com'))).toThrow(/PUBLIC_URL must be an http/);
    expect(() => parseServerEnv(env('ftp://village.example.com'))).toThrow(/PUBLIC_URL must be an http/);
    expect(() => parseServerEnv(env('https://village.example.com/app'))).toThrow(/origin only/);
  });
});

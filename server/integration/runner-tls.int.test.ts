import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result, RunnerSummary } from '../../protocol';
import { ROOT, startStack, waitFor, type Stack } from './harness';

/**
 * Mutual TLS between a runner and the control plane, with a private CA made at test time by the
 * openssl CLI: a runner whose client certificate that CA signed registers; one without a client
 * certificate, or with one from another CA, is refused in the handshake (and exits 3).
 */

const EXIT_UNAUTHORIZED = 3;

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, and a leaf it signs with the given extensions (EC P-256: quick to make). */
function makeCa(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '1', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
}
function makeLeaf(dir: string, ca: string, name: string, ext: string): void {
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`]);
}

/** JSON over https trusting the test CA (global fetch cannot take a CA per request). */
function request<T>(url: string, ca: Buffer, method: string, body?: unknown, cookie = ''): Promise<{ status: number; json: Result<T>; cookie: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(
      u,
      { method, ca, headers: { origin: u.origin, ...(cookie ? { cookie } : {}), ...(data ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const set = res.headers['set-cookie']?.[0]?.split(';')[0] ?? cookie;
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) as Result<T>, cookie: set });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

function startRunner(stack: Stack, token: string, name: string, files: Record<string, string>): { child: ChildProcess; stderr: string[]; exit: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', name, '--data-dir', join(stack.dataDir, name), ...Object.entries(files).flatMap(([k, v]) => [`--${k}`, v])],
    { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stderr: string[] = [];
  child.stderr!.on('data', (b: Buffer) => stderr.push(b.toString()));
  return { child, stderr, exit: new Promise((res) => child.once('exit', (code) => res(code))) };
}

describe('runner over mutual TLS (a CA made at test time)', () => {
  let dir: string;
  let stack: Stack;
  let ca: Buffer;
  let token: string;
  let cookie = '';
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'av-tls-'));
    // A root server runs its attached runner as an unprivileged user, which must read the CA file.
    chmodSync(dir, 0o755);
    makeCa(dir, 'ca');
    makeLeaf(dir, 'ca', 'server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
    makeLeaf(dir, 'ca', 'runner', 'extendedKeyUsage=clientAuth\n');
    makeCa(dir, 'rogue');
    makeLeaf(dir, 'rogue', 'intruder', 'extendedKeyUsage=clientAuth\n');
    ca = readFileSync(join(dir, 'ca.crt'));
    stack = await startStack({
      attachedRunner: false,
      env: { AGENT_VILLAGE_DEMO_REPO: '0', TLS_CERT: join(dir, 'server.crt'), TLS_KEY: join(dir, 'server.key'), TLS_CLIENT_CA: join(dir, 'ca.crt') },
    });
    expect(stack.url).toMatch(/^https:\/\//);
    // A browser needs no client certificate: the pages and API answer over plain server TLS.
    const setup = await request(`${stack.url}/api/setup`, ca, 'POST', { email: 'admin@example.com', password: 'correct horse battery', name: 'Ada', setup_token: stack.setupToken });
    expect(setup.json.ok).toBe(true);
    cookie = setup.cookie;
    if (!cookie) cookie = (await request(`${stack.url}/api/auth/login`, ca, 'POST', { email: 'admin@example.com', password: 'correct horse battery' })).cookie;
    const created = await request<{ token: string }>(`${stack.url}/api/runner-tokens`, ca, 'POST', { name: 'tls' }, cookie);
    if (!created.json.ok) throw new Error(created.json.error.message);
    token = created.json.data.token;
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const runners = async () => {
    const r = await request<RunnerSummary[]>(`${stack.url}/api/runners`, ca, 'GET', undefined, cookie);
    return r.json.ok ? r.json.data : [];
  };

  it('a runner with a client certificate from the CA registers over https', async () => {
    const r = startRunner(stack, token, 'trusted', { ca: join(dir, 'ca.crt'), cert: join(dir, 'runner.crt'), key: join(dir, 'runner.key') });
    children.push(r.child);
    await waitFor(async () => (await runners()).find((x) => x.name === 'trusted' && x.online), 'the mTLS runner online', 60_000);
  });

  it('a runner without a client certificate, or with one from another CA, is refused in the handshake and exits', async () => {
    for (const [name, files] of [
      ['bare', { ca: join(dir, 'ca.crt') }],
      ['intruder', { ca: join(dir, 'ca.crt'), cert: join(dir, 'intruder.crt'), key: join(dir, 'intruder.key') }],
    ] as const) {
      const r = startRunner(stack, token, name, files);
      children.push(r.child);
      expect(await r.exit).toBe(EXIT_UNAUTHORIZED);
      expect(r.stderr.join('')).toMatch(/handshake was refused \(HTTP 403: the control plane requires a client certificate/);
    }
    expect((await runners()).map((x) => x.name)).toEqual(['trusted']);
  });

  it('the attached runner of an https control plane dials https with the CA it is given (AGENT_RUNNER_CA)', async () => {
    const attached = await startStack({
      env: { TLS_CERT: join(dir, 'server.crt'), TLS_KEY: join(dir, 'server.key'), AGENT_RUNNER_CA: join(dir, 'ca.crt') },
    });
    try {
      expect(attached.url).toMatch(/^https:\/\//);
      await waitFor(() => /\[runner\] registered as runner_/.test(attached.logs.join('')), 'the attached runner registered over https', 60_000);
    } finally {
      await attached.stop();
    }
  });

  it('plain http:// to a host that is not loopback is refused unless --insecure', async () => {
    const r = startRunner({ ...stack, url: 'http://192.0.2.10:3000' }, token, 'plain', {});
    expect(await r.exit).toBe(2);
    expect(r.stderr.join('')).toMatch(/plain http:\/\/ .*--insecure/);
  });
});

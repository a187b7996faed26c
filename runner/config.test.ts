import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPACITY, loadConfig } from './config';

describe('loadConfig', () => {
  it('reads flags, with environment fallbacks and defaults', () => {
    const r = loadConfig(['--server', 'http://localhost:3000/', '--token', 't0k'], {});
    expect(r).toEqual({
      ok: true,
      config: { server: 'http://localhost:3000', token: 't0k', name: expect.any(String), data_dir: path.join(os.homedir(), '.agent-runner'), capacity: DEFAULT_CAPACITY, labels: [], repo_access: [], provider_auth: [], listen: null, insecure: false },
    });
    const env = loadConfig([], {
      AGENT_RUNNER_SERVER: 'https://cp.example.com',
      AGENT_RUNNER_TOKEN: 'envtoken',
      AGENT_RUNNER_NAME: 'box-1',
      AGENT_RUNNER_DATA_DIR: '/tmp/x/../runner-data',
      AGENT_RUNNER_CAPACITY: '3',
    });
    expect(env).toEqual({
      ok: true,
      config: { server: 'https://cp.example.com', token: 'envtoken', name: 'box-1', data_dir: '/tmp/runner-data', capacity: 3, labels: [], repo_access: [], provider_auth: [], listen: null, insecure: false },
    });
    // A flag wins over the environment.
    const both = loadConfig(['--capacity', '5'], { AGENT_RUNNER_SERVER: 'http://localhost', AGENT_RUNNER_TOKEN: 't', AGENT_RUNNER_CAPACITY: '3' });
    expect(both.ok && both.config.capacity).toBe(5);
  });

  it('reads which providers share the runner user\'s sign-in file; an unknown name is refused in words', () => {
    const base = { AGENT_RUNNER_SERVER: 'http://localhost', AGENT_RUNNER_TOKEN: 't' };
    const flag = loadConfig(['--provider-auth', 'claude, codex,claude'], { ...base, AGENT_RUNNER_PROVIDER_AUTH: 'gemini' });
    expect(flag.ok && flag.config.provider_auth).toEqual(['claude', 'codex']);
    const env = loadConfig([], { ...base, AGENT_RUNNER_PROVIDER_AUTH: 'gemini' });
    expect(env.ok && env.config.provider_auth).toEqual(['gemini']);
    const bad = loadConfig(['--provider-auth', 'claude,shell'], base);
    expect(!bad.ok && bad.message).toMatch(/provider_auth.*claude, codex or gemini/);
  });

  it('reads labels, repo access patterns and the listen port (flags win over the environment)', () => {
    const base = { AGENT_RUNNER_SERVER: 'http://localhost', AGENT_RUNNER_TOKEN: 't' };
    const fromEnv = loadConfig([], { ...base, AGENT_RUNNER_LABELS: 'gpu, eu-west,,', AGENT_RUNNER_REPO_ACCESS: '/srv/code/**,https://github.com/acme/*', AGENT_RUNNER_LISTEN: '7070' });
    expect(fromEnv.ok && fromEnv.config).toMatchObject({ labels: ['gpu', 'eu-west'], repo_access: ['/srv/code/**', 'https://github.com/acme/*'], listen: 7070 });
    const flags = loadConfig(['--labels', 'a,b', '--repo-access', '/x/*', '--listen', '0'], { ...base, AGENT_RUNNER_LABELS: 'env' });
    expect(flags.ok && flags.config).toMatchObject({ labels: ['a', 'b'], repo_access: ['/x/*'], listen: 0 });
    const braces = loadConfig(['--repo-access', '/srv/{a,b}/**,/x/*'], base);
    expect(braces.ok && braces.config.repo_access).toEqual(['/srv/{a,b}/**', '/x/*']);
    const badPort = loadConfig(['--listen', '70000'], base);
    expect(!badPort.ok && badPort.message).toMatch(/listen: must be a port number/);
    const longLabel = loadConfig(['--labels', 'x'.repeat(51)], base);
    expect(!longLabel.ok && longLabel.message).toMatch(/labels/);
  });

  it('explains what is wrong', () => {
    const missing = loadConfig([], {});
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.message).toMatch(/server: is required.*token: is required/s);
    const badCap = loadConfig(['--server', 'http://localhost', '--token', 't', '--capacity', '-1'], {});
    expect(!badCap.ok && badCap.message).toMatch(/capacity/);
    const badUrl = loadConfig(['--server', 'ftp://a', '--token', 't'], {});
    expect(!badUrl.ok && badUrl.message).toMatch(/server: must start with/);
    const unknownFlag = loadConfig(['--bogus'], {});
    expect(!unknownFlag.ok && unknownFlag.message).toMatch(/bogus/);
  });

  it('refuses plain http:// to a host that is not loopback unless --insecure; TLS files are read at start', () => {
    for (const server of ['http://cp.example.com', 'ws://10.0.0.5:3000', 'http://192.168.1.2']) {
      const r = loadConfig(['--server', server, '--token', 't'], {});
      expect(!r.ok && r.message).toMatch(/server: is plain http:\/\/ .*--insecure \(AGENT_RUNNER_INSECURE=1\)/);
      expect(loadConfig(['--server', server, '--token', 't', '--insecure'], {}).ok).toBe(true);
      expect(loadConfig(['--server', server, '--token', 't'], { AGENT_RUNNER_INSECURE: '1' }).ok).toBe(true);
    }
    for (const server of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://127.8.9.10', 'http://[::1]:3000', 'https://cp.example.com']) {
      expect(loadConfig(['--server', server, '--token', 't'], {}).ok).toBe(true);
    }
    const noKey = loadConfig(['--server', 'https://cp', '--token', 't', '--cert', '/x.crt'], {});
    expect(!noKey.ok && noKey.message).toMatch(/key: a client certificate needs both --cert and --key/);
    const plainWithCa = loadConfig(['--server', 'http://localhost', '--token', 't', '--ca', '/x.crt'], {});
    expect(!plainWithCa.ok && plainWithCa.message).toMatch(/only apply to an https:/);
    const missing = loadConfig(['--server', 'https://cp', '--token', 't', '--ca', '/nonexistent/ca.crt'], {});
    expect(!missing.ok && missing.message).toMatch(/ca: cannot read \/nonexistent\/ca.crt/);
    const file = path.join(os.tmpdir(), `av-config-ca-${process.pid}.pem`);
    fs.writeFileSync(file, 'PEM');
    const withCa = loadConfig(['--server', 'https://cp', '--token', 't'], { AGENT_RUNNER_CA: file });
    expect(withCa.ok && withCa.config.tls?.ca?.toString()).toBe('PEM');
    fs.rmSync(file);
  });
});

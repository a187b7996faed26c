import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPACITY, loadConfig } from './config';

describe('loadConfig', () => {
  it('reads flags, with environment fallbacks and defaults', () => {
    const r = loadConfig(['--server', 'http://localhost:3000/', '--token', 't0k'], {});
    expect(r).toEqual({
      ok: true,
      config: { server: 'http://localhost:3000', token: 't0k', name: expect.any(String), data_dir: path.join(os.homedir(), '.agent-runner'), capacity: DEFAULT_CAPACITY, labels: [], repo_access: [], provider_auth: [], listen: null },
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
      config: { server: 'https://cp.example.com', token: 'envtoken', name: 'box-1', data_dir: '/tmp/runner-data', capacity: 3, labels: [], repo_access: [], provider_auth: [], listen: null },
    });
    // A flag wins over the environment.
    const both = loadConfig(['--capacity', '5'], { AGENT_RUNNER_SERVER: 'http://a', AGENT_RUNNER_TOKEN: 't', AGENT_RUNNER_CAPACITY: '3' });
    expect(both.ok && both.config.capacity).toBe(5);
  });

  it('reads which providers share the runner user\'s sign-in file; an unknown name is refused in words', () => {
    const base = { AGENT_RUNNER_SERVER: 'http://a', AGENT_RUNNER_TOKEN: 't' };
    const flag = loadConfig(['--provider-auth', 'claude, codex,claude'], { ...base, AGENT_RUNNER_PROVIDER_AUTH: 'gemini' });
    expect(flag.ok && flag.config.provider_auth).toEqual(['claude', 'codex']);
    const env = loadConfig([], { ...base, AGENT_RUNNER_PROVIDER_AUTH: 'gemini' });
    expect(env.ok && env.config.provider_auth).toEqual(['gemini']);
    const bad = loadConfig(['--provider-auth', 'claude,shell'], base);
    expect(!bad.ok && bad.message).toMatch(/provider_auth.*claude, codex or gemini/);
  });

  it('reads labels, repo access patterns and the listen port (flags win over the environment)', () => {
    const base = { AGENT_RUNNER_SERVER: 'http://a', AGENT_RUNNER_TOKEN: 't' };
    const fromEnv = loadConfig([], { ...base, AGENT_RUNNER_LABELS: 'gpu, eu-west,,', AGENT_RUNNER_REPO_ACCESS: '/srv/code/**,https://github.com/acme/*', AGENT_RUNNER_LISTEN: '7070' });
    expect(fromEnv.ok && fromEnv.config).toMatchObject({ labels: ['gpu', 'eu-west'], repo_access: ['/srv/code/**', 'https://github.com/acme/*'], listen: 7070 });
    const flags = loadConfig(['--labels', 'a,b', '--repo-access', '/x/*', '--listen', '0'], { ...base, AGENT_RUNNER_LABELS: 'env' });
    expect(flags.ok && flags.config).toMatchObject({ labels: ['a', 'b'], repo_access: ['/x/*'], listen: 0 });
    const badPort = loadConfig(['--listen', '70000'], base);
    expect(!badPort.ok && badPort.message).toMatch(/listen: must be a port number/);
    const longLabel = loadConfig(['--labels', 'x'.repeat(51)], base);
    expect(!longLabel.ok && longLabel.message).toMatch(/labels/);
  });

  it('explains what is wrong', () => {
    const missing = loadConfig([], {});
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.message).toMatch(/server: is required.*token: is required/s);
    const badCap = loadConfig(['--server', 'http://a', '--token', 't', '--capacity', '-1'], {});
    expect(!badCap.ok && badCap.message).toMatch(/capacity/);
    const badUrl = loadConfig(['--server', 'ftp://a', '--token', 't'], {});
    expect(!badUrl.ok && badUrl.message).toMatch(/server: must start with/);
    const unknownFlag = loadConfig(['--bogus'], {});
    expect(!unknownFlag.ok && unknownFlag.message).toMatch(/bogus/);
  });
});

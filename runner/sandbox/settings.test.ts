import { afterEach, describe, expect, it } from 'vitest';
import { captureLogger, createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { parseSandboxEnv, SandboxUnavailableError, setUpSandbox } from './settings';

describe('sandbox settings and the loud fallback', () => {
  let h: SessionHarness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('parses AGENT_RUNNER_SANDBOX and AGENT_RUNNER_PRIVATE_PATHS, refusing bad values in words', () => {
    expect(parseSandboxEnv({})).toEqual({ AGENT_RUNNER_SANDBOX: 'auto', AGENT_RUNNER_PRIVATE_PATHS: [] });
    expect(parseSandboxEnv({ AGENT_RUNNER_SANDBOX: 'required', AGENT_RUNNER_PRIVATE_PATHS: '/srv/data, /etc/av' })).toEqual({
      AGENT_RUNNER_SANDBOX: 'required',
      AGENT_RUNNER_PRIVATE_PATHS: ['/srv/data', '/etc/av'],
    });
    expect(() => parseSandboxEnv({ AGENT_RUNNER_SANDBOX: 'maybe' })).toThrow(/auto, required or off/);
    expect(() => parseSandboxEnv({ AGENT_RUNNER_PRIVATE_PATHS: 'relative/dir' })).toThrow(/absolute/);
  });

  it('without bubblewrap: `required` refuses to start; `auto` logs loudly and goes on; `off` says it is off', async () => {
    const log = captureLogger();
    const missing = '/nonexistent/bwrap';
    await expect(setUpSandbox({ dataDir: '/tmp/x', env: { AGENT_RUNNER_SANDBOX: 'required', AGENT_RUNNER_PRIVATE_PATHS: [] }, log, bwrap: missing })).rejects.toBeInstanceOf(SandboxUnavailableError);
    const auto = await setUpSandbox({ dataDir: '/tmp/x', env: { AGENT_RUNNER_SANDBOX: 'auto', AGENT_RUNNER_PRIVATE_PATHS: [] }, log, bwrap: missing });
    expect(auto.available).toBe(false);
    expect(log.lines.join('\n')).toMatch(/sandbox: UNAVAILABLE .*bwrap is missing.*WITHOUT a sandbox/);
    const off = await setUpSandbox({ dataDir: '/tmp/x', env: { AGENT_RUNNER_SANDBOX: 'off', AGENT_RUNNER_PRIVATE_PATHS: [] }, log });
    expect(off.available).toBe(false);
    expect(log.lines.join('\n')).toMatch(/sandbox: OFF/);
  });

  it('a restricted session on a runner with no sandbox and no namespace runs, and says in its terminal and an alert that egress is open', async () => {
    h = await makeSessionHarness('fallback', { deps: () => ({ guardNamespace: false }) });
    const cmd = createCommand({ repo_source: h.source, policy: { network: { mode: 'restricted', allow_hosts: [] } } });
    expect(h.manager.create(cmd).ok).toBe(true);
    const harness = h;
    await waitFor(() => /[#$] /.test(outputOf(harness.events, cmd.session_id)), 'prompt');
    expect(outputOf(h.events, cmd.session_id)).toContain('network egress is NOT restricted for this session');
    expect(eventsOf(h.events, cmd.session_id, 'ALERT_RAISED').some((e) => e.severity === 'warning' && e.message.includes('cannot sandbox'))).toBe(true);
  });
});

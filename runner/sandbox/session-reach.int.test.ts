import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ReachReport } from '../testing/session-reach';

/**
 * What a session can reach, proved from inside real sessions (issue 11 items 1–4, issue 12): a
 * runner process with a token in its environment starts a sandboxed shell session, which then
 * tries to read the control plane's and the runner's files, look at /proc, read the runner's
 * environment, leave a setsid child behind, write outside its worktree, reach a host that is not
 * allowed, and print an org secret. Run as this test's user and — when that is root — as an
 * unprivileged user (`AV_TEST_USER`, default `avtest`, created by .ci/run), so both a root and a
 * normal runner are covered.
 */

const MAIN = fileURLToPath(new URL('../testing/session-reach-main.ts', import.meta.url));
const ROOT = path.resolve(path.dirname(MAIN), '..', '..');
const TEST_USER = process.env.AV_TEST_USER || 'avtest';
const isRoot = process.getuid?.() === 0;

function userIds(name: string): { uid: number; gid: number } | null {
  try {
    const f = execFileSync('getent', ['passwd', name], { encoding: 'utf8' }).trim().split(':');
    return { uid: Number(f[2]), gid: Number(f[3]) };
  } catch {
    return null;
  }
}

/** Runs the probe as a separate runner process (optionally as another user) and parses its report. */
function probe(as: { uid: number; gid: number } | null): Promise<ReachReport> {
  const token = `avr_${crypto.randomBytes(16).toString('hex')}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', NODE_ENV: 'test', AGENT_RUNNER_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(as ? { uid: as.uid, gid: as.gid } : {}),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('REACH '));
      if (code === 0 && line) resolve(JSON.parse(line.slice('REACH '.length)) as ReachReport);
      else reject(new Error(`the probe exited with ${code}: ${err.slice(-3000)}`));
    });
  });
}

function expectContained(r: ReachReport): void {
  // The sandbox is what everything below rests on; a machine without user namespaces fails here, loudly.
  expect(r.sandbox, r.sandbox.why).toMatchObject({ available: true });
  // Control plane data and the runner's own files: not there at all.
  expect(r.controlPlaneKeyShown).toBe(false);
  expect(r.controlPlaneEntries).toBe('0');
  expect(r.runnerSpoolVisible).not.toBe('0');
  // Its own PID namespace: a handful of its own processes, none of the runner's.
  expect(r.procCount).toBeGreaterThan(0);
  expect(r.procCount).toBeLessThan(12);
  expect(r.procCmdlines).not.toMatch(/session-reach-main|vitest|tsx/);
  expect(r.runnerEnvironReadable).not.toBe('0');
  expect(r.tokenFoundInProc).not.toBe('0');
  // No new privileges; no new namespaces to get out of its mounts (seccomp, where there is a table).
  expect(r.noNewPrivs).toBe('0');
  if (r.sandbox.seccomp) expect(r.unshare).not.toBe('0');
  // Writes: the machine and the control plane's folder are read-only, the worktree is not.
  expect(r.writeOutside).toEqual({ usrLocal: expect.not.stringMatching(/^0$/), controlPlane: expect.not.stringMatching(/^0$/), worktree: '0' });
  // Egress: the allowed loopback server answers through the proxy; another host is refused,
  // shown in the terminal and reported with its host; going around the proxy finds no network.
  expect(r.allowedHost).toEqual({ exit: '0', body: true });
  expect(r.refusedHost.exit).not.toBe('0');
  expect(r.refusedHost.shown).toBe(true);
  expect(r.refusedHost.policyBlocked).toMatchObject({ type: 'POLICY_BLOCKED', host: '127.0.0.3', outcome: 'prevented' });
  expect(r.directBypass).not.toBe('0');
  // Org secrets: not in the environment unless marked "inject into sessions"; never in an event.
  expect(r.orgSecretEnv).toEqual({ exit: '1', leaked: false });
  expect(r.injectedSecretEnv).toBe('0');
  // Stop ends everything the session started, setsid children too, and usage is counted to the end.
  expect(r.setsidAliveBeforeStop).toBe(true);
  expect(r.setsidAliveAfterStop).toBe(false);
  expect(r.usageAfterStop).toBe(true);
  expect(r.finalState).toBe('COMPLETED');
}

describe('what a session can reach (sandbox)', () => {
  it(`as this test's user (${isRoot ? 'root' : 'not root'})`, async () => {
    const r = await probe(null);
    expectContained(r);
  });

  it(`as an unprivileged runner user (${TEST_USER})`, async (ctx) => {
    if (!isRoot) {
      // The run above already is one; a non-root test cannot switch users.
      ctx.skip();
      return;
    }
    const ids = userIds(TEST_USER);
    if (!ids) {
      console.warn(`skipped: no user "${TEST_USER}" (.ci/run creates it: useradd -m ${TEST_USER})`);
      ctx.skip();
      return;
    }
    const r = await probe(ids);
    expect(r.uid).toBe(ids.uid);
    expectContained(r);
  });
});

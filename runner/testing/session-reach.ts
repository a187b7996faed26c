import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { RunnerEvent } from '../../protocol';
import { hiddenPaths, probeSandbox, type SandboxSupport } from '../sandbox';
import { createCommand, outputOf, waitFor } from './fixtures';
import { eventsOf, makeSessionHarness } from './session-harness';

/**
 * What a real session can reach, probed from inside it (issues 11 and 12): a shell session in the
 * sandbox types commands and the runner side looks at what happened. Run by
 * runner/sandbox/session-reach.int.test.ts in a child process — as the test's own user and, when
 * that is root, as an unprivileged one — so the runner's real environment (with a token in it)
 * is what the session must not see. Prints one JSON report; the test asserts on it.
 */

export interface ReachReport {
  uid: number;
  sandbox: { available: boolean; why: string; seccomp: boolean };
  controlPlaneKeyShown: boolean;
  controlPlaneEntries: string;
  runnerSpoolVisible: string;
  procCount: number;
  procCmdlines: string;
  runnerEnvironReadable: string;
  tokenFoundInProc: string;
  writeOutside: { usrLocal: string; controlPlane: string; worktree: string };
  setsidAliveBeforeStop: boolean;
  setsidAliveAfterStop: boolean;
  allowedHost: { exit: string; body: boolean };
  refusedHost: { exit: string; shown: boolean; policyBlocked: RunnerEvent | null };
  directBypass: string;
  orgSecretEnv: { exit: string; leaked: boolean };
  injectedSecretEnv: string;
  usageAfterStop: boolean;
  noNewPrivs: string;
  unshare: string;
  finalState: string | undefined;
}

const RUNNER_TOKEN_ENV = 'AGENT_RUNNER_TOKEN';
/** The setsid child is recognised by this unusual duration in its command line. */
const SETSID_SECONDS = '4242.5';

function hostPidsOf(argvSuffix: string): number[] {
  const out: number[] = [];
  for (const n of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${n}/cmdline`, 'utf8');
      const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
      if (cmd.endsWith(`\0${argvSuffix}\0`) && !stat.includes(') Z ')) out.push(Number(n));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

async function listen(host: string, body: string): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((_req, res) => res.end(body));
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  return { server, port: (server.address() as AddressInfo).port };
}

export async function probeSessionReach(): Promise<ReachReport> {
  const token = process.env[RUNNER_TOKEN_ENV];
  if (!token) throw new Error(`${RUNNER_TOKEN_ENV} must be set (the marker the session must not find)`);
  const scratch = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'reach-sbx-'));
  const probed = await probeSandbox({ dir: scratch, hidden: [] });
  // The control plane's folder, as the attached runner is told about it (AGENT_RUNNER_PRIVATE_PATHS).
  const cp = path.join(scratch, 'control-plane-data');
  fs.mkdirSync(cp);
  const cpKey = `CPKEY-${crypto.randomBytes(8).toString('hex')}`;
  fs.writeFileSync(path.join(cp, 'secret.key'), cpKey);
  fs.writeFileSync(path.join(cp, 'village.db'), 'SQLite format 3\0');
  const orgSecret = `orgsecret-${crypto.randomBytes(8).toString('hex')}`;
  const allowed = await listen('127.0.0.2', 'reach-allowed-body');
  const refused = await listen('127.0.0.3', 'reach-refused-body');
  let sandbox: SandboxSupport | undefined;
  const h = await makeSessionHarness('reach', {
    hooks: true,
    deps: (dataDir) => {
      sandbox = probed.available ? { ...probed, hidden: hiddenPaths(dataDir, [cp]) } : undefined;
      return { sandbox };
    },
  });
  try {
    const cmd = createCommand({
      repo_source: h.source,
      policy: { network: { mode: 'restricted', allow_hosts: ['127.0.0.2'] } },
      secrets: { ORG_SECRET: orgSecret, INJECTED_ONE: 'injected-value-1' },
      inject_secrets: ['INJECTED_ONE'],
    });
    const sid = cmd.session_id;
    if (!h.manager.create(cmd).ok) throw new Error('create refused');
    await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt', 30_000);
    const run = async (line: string, marker: string): Promise<{ exit: string; out: string }> => {
      const before = outputOf(h.events, sid).length;
      h.manager.input({ session_id: sid, data: `${line}; echo ${marker}-$?-END`, mode: 'line' });
      const m = await waitFor(() => new RegExp(`${marker}-(\\d+)-END`).exec(outputOf(h.events, sid).slice(before)), marker, 30_000).catch((err: Error) => {
        throw new Error(`${err.message}; the terminal said: ${outputOf(h.events, sid).slice(before).slice(-2000)}`);
      });
      return { exit: m[1], out: outputOf(h.events, sid).slice(before) };
    };
    const key = await run(`cat ${cp}/secret.key`, 'K1');
    const entries = await run(`echo COUNT=$(ls -A ${cp} | wc -l)`, 'K2');
    const spool = await run(`test -e ${h.dataDir}/spool`, 'K3');
    const procs = await run(`echo COUNT=$(ls /proc | grep -cE '^[0-9]+$')`, 'P1');
    const cmdlines = await run(`for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done`, 'P2');
    const environ = await run(`cat /proc/${process.pid}/environ > /dev/null`, 'P3');
    const tokenGrep = await run(`grep -l -F -- ${token} /proc/[0-9]*/environ 2>/dev/null`, 'P4');
    const nnp = await run(`grep -q 'NoNewPrivs:.*1' /proc/self/status`, 'S1');
    const uns = await run(`unshare -U true`, 'S2');
    const usrLocal = await run(`touch /usr/local/av-reach-$$`, 'W1');
    const cpWrite = await run(`echo x > ${cp}/planted`, 'W2');
    const wtWrite = await run(`echo ok > reach.txt`, 'W3');
    const ok = await run(`curl -s -m 20 http://127.0.0.2:${allowed.port}/`, 'N1');
    const no = await run(`curl -s -f -m 20 http://127.0.0.3:${refused.port}/`, 'N2');
    const bypass = await run(`curl -s -m 5 --noproxy '*' http://127.0.0.2:${allowed.port}/`, 'N3');
    const orgEnv = await run(`printenv ORG_SECRET`, 'E1');
    const injEnv = await run(`printenv INJECTED_ONE > /dev/null`, 'E2');
    await run(`{ setsid sleep ${SETSID_SECONDS} < /dev/null > /dev/null 2>&1 & }`, "D1");
    await waitFor(() => hostPidsOf(SETSID_SECONDS).length > 0, 'the setsid child', 15_000).catch(() => undefined);
    const aliveBefore = hostPidsOf(SETSID_SECONDS).length > 0;
    const stopAt = h.events.length;
    h.manager.stop({ session_id: sid });
    await h.manager.get(sid)?.done;
    await waitFor(() => eventsOf(h.events, sid, 'SESSION_STATE_CHANGED').some((e) => e.to === 'COMPLETED' || e.to === 'FAILED'), 'the final state', 30_000);
    // Stop has returned and the session ended: anything of it still running escaped.
    const aliveAfter = hostPidsOf(SETSID_SECONDS).length > 0;
    const blocked = eventsOf(h.events, sid, 'POLICY_BLOCKED').find((e) => e.host === '127.0.0.3') ?? null;
    const states = eventsOf(h.events, sid, 'SESSION_STATE_CHANGED');
    return {
      uid: process.getuid?.() ?? -1,
      sandbox: { available: probed.available, why: probed.why, seccomp: probed.seccompFile !== null },
      controlPlaneKeyShown: key.out.includes(cpKey),
      controlPlaneEntries: /COUNT=(\d+)/.exec(entries.out)?.[1] ?? '?',
      runnerSpoolVisible: spool.exit,
      procCount: Number(/COUNT=(\d+)/.exec(procs.out)?.[1] ?? -1),
      procCmdlines: cmdlines.out,
      runnerEnvironReadable: environ.exit,
      tokenFoundInProc: tokenGrep.exit,
      writeOutside: { usrLocal: usrLocal.exit, controlPlane: cpWrite.exit, worktree: wtWrite.exit },
      setsidAliveBeforeStop: aliveBefore,
      setsidAliveAfterStop: aliveAfter,
      allowedHost: { exit: ok.exit, body: ok.out.includes('reach-allowed-body') },
      refusedHost: { exit: no.exit, shown: outputOf(h.events, sid).includes(`network: blocked 127.0.0.3:${refused.port}`), policyBlocked: blocked },
      directBypass: bypass.exit,
      orgSecretEnv: { exit: orgEnv.exit, leaked: JSON.stringify(h.events).includes(orgSecret) },
      injectedSecretEnv: injEnv.exit,
      usageAfterStop: h.events.slice(stopAt).some((e) => e.session_id === sid && e.type === 'USAGE_TICK'),
      noNewPrivs: nnp.exit,
      unshare: uns.exit,
      finalState: states.at(-1)?.to,
    };
  } finally {
    await h.close();
    allowed.server.close();
    refused.server.close();
    fs.rmSync(path.join(cp, 'planted'), { force: true });
    await fs.promises.rm(scratch, { recursive: true, force: true });
  }
}

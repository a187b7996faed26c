import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Policy, type RunnerEvent } from '../../protocol';
import { captureLogger, createCommand, gitIn, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { Spool } from '../spool/spool';
import { probeReadOnlyPrevention } from '../workspace/read-only';
import { probeSandbox, type SandboxSupport } from '../sandbox';
import { ApprovalJournal } from './journal';

/**
 * Approvals and policy end to end: real shell sessions in real PTYs, real git, the real hook
 * channel and guard shims; with root, the per-session mount/network namespace.
 */

/**
 * Each test runs twice: in the bubblewrap sandbox (runner/sandbox, what every runner uses where
 * user namespaces work) and in the older root-only guard namespace (the fallback without bwrap).
 * `namespace` says whether the run has namespaces at all.
 */
let namespace = false;
let sandbox: SandboxSupport | undefined;
let isolation: 'sandbox' | 'root namespace' = 'sandbox';
let rootNamespace = false;
beforeAll(async () => {
  rootNamespace = (await probeReadOnlyPrevention()).available;
  const probed = await probeSandbox({ dir: path.join('/tmp', `av-approvals-sbx-${process.pid}`), hidden: [] });
  sandbox = probed.available ? probed : undefined;
});
const useIsolation = (kind: typeof isolation) => {
  isolation = kind;
  namespace = kind === 'sandbox' ? sandbox !== undefined : rootNamespace;
};

const makeHarness = () =>
  makeSessionHarness('approvals', {
    hooks: true,
    deps: (dataDir) => ({ guardNamespace: isolation === 'root namespace' && namespace, sandbox: isolation === 'sandbox' ? sandbox : undefined, approvalJournal: new ApprovalJournal(path.join(dataDir, 'approvals'), captureLogger()), watchDebounceMs: 30 }),
  });
const of = eventsOf;
const states = (events: RunnerEvent[], sid: string) => of(events, sid, 'SESSION_STATE_CHANGED').map((e) => e.to);

async function startShell(h: SessionHarness, policy: Policy = {}) {
  const cmd = createCommand({ repo_source: h.source, policy });
  const sid = cmd.session_id;
  expect(h.manager.create(cmd).ok).toBe(true);
  await waitFor(() => states(h.events, sid).includes('RUNNING') || states(h.events, sid).includes('FAILED'), 'RUNNING');
  const session = h.manager.get(sid)!;
  await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
  const bare = h.manager.get(sid)!.worktree!.path.replace(/worktrees\/[^/]+$/, 'repos/repo_sample01.git');
  return { sid, session, worktree: session.worktree!.path, bare };
}

/** Types a line and waits until `marker` (printed after it) shows up. */
async function run(h: SessionHarness, sid: string, line: string, marker: string): Promise<string> {
  h.manager.input({ session_id: sid, data: `${line}; echo ${marker}-$?`, mode: 'line' });
  const m = await waitFor(() => new RegExp(`${marker}-(\\d+)`).exec(outputOf(h.events, sid).replace(`echo ${marker}-$?`, '')), marker, 15_000);
  return m[1];
}

const mainOf = (bare: string) => gitIn(bare, ['rev-parse', 'refs/heads/main']).trim();

describe.each(['sandbox', 'root namespace'] as const)('approvals and policy in real sessions (%s)', (kind) => {
  beforeAll(() => useIsolation(kind));
  let h: SessionHarness;
  afterEach(() => h.close());

  it('git push to main asks; allow → the ref moves in the bare clone; the session waits meanwhile', async () => {
    h = await makeHarness();
    const { sid, worktree, bare } = await startShell(h);
    fs.writeFileSync(path.join(worktree, 'new.txt'), 'x\n');
    expect(await run(h, sid, 'git add -A && git commit -qm work', 'C1')).toBe('0');
    const before = mainOf(bare);
    h.manager.input({ session_id: sid, data: 'git push -q . HEAD:main; echo P1-$?', mode: 'line' });
    const req = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[0], 'APPROVAL_REQUESTED');
    expect(req).toMatchObject({ category: 'merge', risk: 'high', context: { target_branch: 'main', source: 'shim', rule: 'push to protected branch main', command: 'git push -q . HEAD:main', changed_files: 1 } });
    expect(req.context.diff_stat).toContain('new.txt');
    await waitFor(() => h.manager.get(sid)!.state === 'WAITING_FOR_APPROVAL', 'WAITING_FOR_APPROVAL');
    expect(mainOf(bare)).toBe(before);
    // A decision for another command (wrong hash) is refused and changes nothing.
    expect(h.manager.approve({ session_id: sid, approval_id: req.approval_id, command_hash: 'f'.repeat(64), decision: 'allow', decided_by: 'ann' })).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    expect(h.manager.get(sid)!.state).toBe('WAITING_FOR_APPROVAL');
    const decision = { session_id: sid, approval_id: req.approval_id, command_hash: req.context.command_hash, decision: 'allow' as const, note: 'ship it', decided_by: 'ann' };
    expect(h.manager.approve(decision)).toEqual({ ok: true, data: null });
    // The duplicate / replay is a no-op.
    expect(h.manager.approve(decision)).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(h.manager.approve({ ...decision, decision: 'deny' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    await waitFor(() => /P1-\d/.test(outputOf(h.events, sid)), "push done").catch((e) => { throw new Error(`${e.message}: ${outputOf(h.events, sid).slice(-1500)}`); });
    expect(outputOf(h.events, sid)).toMatch(/P1-0/);
    expect(mainOf(bare)).toBe(gitIn(worktree, ['rev-parse', 'HEAD']).trim());
    const resolved = of(h.events, sid, 'APPROVAL_RESOLVED');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]).toMatchObject({ approval_id: req.approval_id, decision: 'allow', note: 'ship it', decided_by: 'ann', reason: 'decided' });
    expect(states(h.events, sid)).toEqual(['PREPARING_WORKSPACE', 'STARTING_PROVIDER', 'RUNNING', 'WAITING_FOR_APPROVAL', 'RUNNING']);
  });

  it('deny → the ref does not move and the terminal shows who denied it and why', async () => {
    h = await makeHarness();
    const { sid, worktree, bare } = await startShell(h);
    fs.writeFileSync(path.join(worktree, 'new.txt'), 'x\n');
    expect(await run(h, sid, 'git add -A && git commit -qm work', 'C1')).toBe('0');
    const before = mainOf(bare);
    h.manager.input({ session_id: sid, data: 'git checkout -q main && git merge -q --no-edit ' + `agent/${sid}; echo M1-$?`, mode: 'line' });
    const req = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[0], 'APPROVAL_REQUESTED');
    expect(req).toMatchObject({ category: 'merge', context: { rule: 'merge into protected branch main', branch: 'main' } });
    expect(h.manager.approve({ session_id: sid, approval_id: req.approval_id, command_hash: req.context.command_hash, decision: 'deny', note: 'not today', decided_by: 'ann' }).ok).toBe(true);
    await waitFor(() => /M1-1/.test(outputOf(h.events, sid)), 'merge refused');
    expect(outputOf(h.events, sid)).toContain('agent-village: merge into main denied by ann: not today');
    expect(mainOf(bare)).toBe(before);
  });

  it('absolute path, bash -c, sh -c and env -i reach the guard too (mount namespace)', async (ctx) => {
    if (!namespace) ctx.skip();
    h = await makeHarness();
    const { sid, worktree, bare } = await startShell(h);
    fs.writeFileSync(path.join(worktree, 'new.txt'), 'x\n');
    expect(await run(h, sid, 'git add -A && git commit -qm work', 'C1')).toBe('0');
    const before = mainOf(bare);
    const attempts = ['/usr/bin/git push -q . HEAD:main', "bash -c 'git push -q . HEAD:main'", "sh -c '/usr/bin/git push -q . +HEAD:refs/heads/main'", 'env -i /usr/lib/git-core/git push -q . HEAD:main'];
    for (const [i, line] of attempts.entries()) {
      h.manager.input({ session_id: sid, data: `${line}; echo A${i}-$?`, mode: 'line' });
      const req = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[i], `APPROVAL_REQUESTED for ${line}`);
      expect(req.category).toBe('merge');
      h.manager.approve({ session_id: sid, approval_id: req.approval_id, command_hash: req.context.command_hash, decision: 'deny', note: 'no', decided_by: 'bob' });
      await waitFor(() => new RegExp(`A${i}-1`).test(outputOf(h.events, sid)), `refusal of ${line}`);
    }
    expect(mainOf(bare)).toBe(before);
  });

  it('an approval nobody answers expires to deny', async () => {
    h = await makeHarness();
    const { sid, bare } = await startShell(h, { approval_timeout_ms: 1_000 });
    const before = mainOf(bare);
    h.manager.input({ session_id: sid, data: 'git push -q . HEAD:main; echo E1-$?', mode: 'line' });
    const req = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[0], 'APPROVAL_REQUESTED');
    const res = await waitFor(() => of(h.events, sid, 'APPROVAL_RESOLVED')[0], 'APPROVAL_RESOLVED');
    expect(res).toMatchObject({ approval_id: req.approval_id, decision: 'deny', reason: 'expired' });
    await waitFor(() => /E1-1/.test(outputOf(h.events, sid)), 'refusal');
    expect(outputOf(h.events, sid)).toContain('agent-village: merge into main denied: nobody answered in time (expired)');
    expect(h.manager.approve({ session_id: sid, approval_id: req.approval_id, command_hash: req.context.command_hash, decision: 'allow', decided_by: 'ann' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(mainOf(bare)).toBe(before);
  });

  it('npm install <pkg> asks (deps_add); bare npm ci-like commands and git status run directly; av-secret returns a secret after approval', async () => {
    h = await makeHarness();
    const cmd = createCommand({ repo_source: h.source, secrets: { DEPLOY_KEY: 'k-123' } });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
    expect(await run(h, sid, 'git status --short >/dev/null', 'S1')).toBe('0');
    expect(of(h.events, sid, 'APPROVAL_REQUESTED')).toHaveLength(0);
    h.manager.input({ session_id: sid, data: 'npm install left-pad; echo N1-$?', mode: 'line' });
    const req = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[0], 'deps_add request');
    expect(req).toMatchObject({ category: 'deps_add', summary: 'npm adds left-pad' });
    h.manager.approve({ session_id: sid, approval_id: req.approval_id, command_hash: req.context.command_hash, decision: 'deny', decided_by: 'ann' });
    await waitFor(() => /N1-1/.test(outputOf(h.events, sid)), 'npm refused');
    h.manager.input({ session_id: sid, data: 'echo "got:$(av-secret DEPLOY_KEY)"', mode: 'line' });
    const sreq = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[1], 'secrets request');
    expect(sreq).toMatchObject({ category: 'secrets', summary: 'read the org secret DEPLOY_KEY' });
    expect(JSON.stringify(sreq)).not.toContain('k-123');
    h.manager.approve({ session_id: sid, approval_id: sreq.approval_id, command_hash: sreq.context.command_hash, decision: 'allow', decided_by: 'ann' });
    await waitFor(() => /got:k-123/.test(outputOf(h.events, sid)), 'secret printed');
    // `av-secret NAME -- cmd`: after its own approval the value is in that command's environment only.
    h.manager.input({ session_id: sid, data: `av-secret DEPLOY_KEY -- sh -c 'test "$DEPLOY_KEY" = k-123 && echo env-ok-$((6*7))'`, mode: 'line' });
    const ereq = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[2], 'secret-for-a-command request');
    expect(ereq.summary).toMatch(/^run sh -c .* with the org secret DEPLOY_KEY$/);
    h.manager.approve({ session_id: sid, approval_id: ereq.approval_id, command_hash: ereq.context.command_hash, decision: 'allow', decided_by: 'ann' });
    await waitFor(() => /env-ok-42/.test(outputOf(h.events, sid)), 'the command saw the secret');
    expect(await run(h, sid, 'printenv DEPLOY_KEY', 'E1')).toBe('1');
  });

  it('a denylisted command never runs (typed, bash -c, and with the namespace sh -c / absolute path) and is reported', async () => {
    h = await makeHarness();
    const { sid, worktree } = await startShell(h, { shell_denylist: ['touch'] });
    const a = path.join(worktree, 'typed');
    const b = path.join(worktree, 'bashc');
    await run(h, sid, `touch ${a}`, 'D1');
    await run(h, sid, `bash -c 'touch ${b}'`, 'D2');
    expect(outputOf(h.events, sid)).toContain('agent-village: blocked by policy: shell_denylist "touch"');
    // The check must not make every bash start the bashdb debugger (extdebug during startup does).
    expect(outputOf(h.events, sid)).not.toContain('cannot start debugger');
    const blocked = await waitFor(() => (of(h.events, sid, 'POLICY_BLOCKED').length >= 2 ? of(h.events, sid, 'POLICY_BLOCKED') : null), 'POLICY_BLOCKED');
    expect(blocked[0]).toMatchObject({ rule: 'shell_denylist "touch"', outcome: 'prevented', command: `touch ${a}` });
    if (namespace) {
      await run(h, sid, `sh -c '/usr/bin/touch ${b}'`, 'D3');
      await run(h, sid, `env -i /usr/bin/touch ${b}`, 'D4');
    }
    expect(fs.existsSync(a)).toBe(false);
    expect(fs.existsSync(b)).toBe(false);
  });

  it('forbidden paths: an existing file cannot be written (namespace), a new one is reverted', async () => {
    h = await makeHarness();
    const { sid, worktree } = await startShell(h, { forbidden_paths: ['README.md', 'secrets/**'] });
    const readme = fs.readFileSync(path.join(worktree, 'README.md'), 'utf8');
    await run(h, sid, 'echo changed >> README.md', 'F1');
    await run(h, sid, 'mkdir -p secrets && echo k > secrets/key', 'F2');
    await waitFor(() => of(h.events, sid, 'POLICY_BLOCKED').find((e) => e.path === 'secrets/key'), 'secrets/key reverted');
    expect(fs.existsSync(path.join(worktree, 'secrets/key'))).toBe(false);
    if (namespace) {
      expect(outputOf(h.events, sid)).toMatch(/Read-only file system/);
      expect(fs.readFileSync(path.join(worktree, 'README.md'), 'utf8')).toBe(readme);
    } else {
      await waitFor(() => fs.readFileSync(path.join(worktree, 'README.md'), 'utf8') === readme, 'README reverted');
    }
    expect(of(h.events, sid, 'POLICY_BLOCKED').find((e) => e.path === 'secrets/key')).toMatchObject({ outcome: 'reverted', rule: 'forbidden_paths "secrets/**"' });
  });

  it('writes outside the workspace are prevented (namespace): the machine is read-only, the worktree, HOME and /tmp are not', async (ctx) => {
    if (!namespace) ctx.skip();
    h = await makeHarness();
    const { sid, worktree, bare } = await startShell(h);
    // Outside: the runner user's own home, /etc, /usr/local (this test's data is under /tmp, which stays writable scratch).
    expect(await run(h, sid, `echo x > /root/av-outside-${sid}`, 'W1')).not.toBe('0');
    expect(await run(h, sid, `touch /etc/av-outside-${sid}`, 'W2')).not.toBe('0');
    expect(await run(h, sid, `bash -c 'echo x > /usr/local/av-outside-${sid}'`, 'W3')).not.toBe('0');
    expect(outputOf(h.events, sid)).toContain('Read-only file system');
    // The real programs' prefix bound under HOME is read-only too (it is /usr).
    expect(await run(h, sid, 'touch ~/.agent-village/real/git/av-probe', 'W4')).not.toBe('0');
    // Inside: the worktree (and a commit, which writes into the clone), HOME and /tmp.
    expect(await run(h, sid, 'echo ok > inside.txt && git add inside.txt && git commit -qm inside', 'W5')).toBe('0');
    expect(await run(h, sid, `echo ok > ~/notes.txt && echo ok > /tmp/av-scratch-${sid}`, 'W6')).toBe('0');
    expect(fs.existsSync(`/root/av-outside-${sid}`)).toBe(false);
    expect(fs.existsSync(`/etc/av-outside-${sid}`)).toBe(false);
    expect(fs.existsSync(`/usr/local/av-outside-${sid}`)).toBe(false);
    expect(fs.readFileSync(path.join(worktree, 'inside.txt'), 'utf8')).toBe('ok\n');
    expect(gitIn(bare, ['log', '-1', '--format=%s', `agent/${sid}`]).trim()).toBe('inside');
    fs.rmSync(`/tmp/av-scratch-${sid}`, { force: true });
  });

  it('restricted network: the session cannot reach a port open on the host; open mode can', async (ctx) => {
    if (!namespace) ctx.skip();
    h = await makeHarness();
    const server = http.createServer((_req, res) => res.end('hello-from-host'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    try {
      const open = await startShell(h, { network: { mode: 'open' } });
      expect(await run(h, open.sid, `curl -s -m 5 http://127.0.0.1:${port}/`, 'O1')).toBe('0');
      expect(outputOf(h.events, open.sid)).toContain('hello-from-host');
      const closed = await startShell(h, { network: { mode: 'restricted' } });
      expect(await run(h, closed.sid, `curl -s -m 5 http://127.0.0.1:${port}/`, 'R1')).not.toBe('0');
      const node = `node -e "fetch('http://127.0.0.1:${port}/').then(()=>process.exit(0),()=>process.exit(3))"`;
      expect(await run(h, closed.sid, node, 'R2')).toBe('3');
      expect(outputOf(h.events, closed.sid)).not.toContain('hello-from-host');
      // Loopback inside the namespace works (it is up), it is just not the host's.
      expect(await run(h, closed.sid, 'ip -o link show lo | grep -q UP', 'R3')).toBe('0');
      // The guard still reaches the runner (over its Unix socket): git runs, and a push to main still asks.
      expect(await run(h, closed.sid, 'git status --short', 'R4')).toBe('0');
      h.manager.input({ session_id: closed.sid, data: 'git push origin HEAD:main; echo R5-$?', mode: 'line' });
      await waitFor(() => of(h.events, closed.sid, 'APPROVAL_REQUESTED').length === 1, 'the push asks from inside the network namespace');
    } finally {
      server.close();
    }
  });

  it('runner restart while an approval waits: not performed, APPROVAL_RESOLVED runner_restarted before FAILED', async () => {
    h = await makeHarness();
    const { sid, bare } = await startShell(h);
    const before = mainOf(bare);
    h.manager.input({ session_id: sid, data: 'git push -q . HEAD:main', mode: 'line' });
    const req = await waitFor(() => of(h.events, sid, 'APPROVAL_REQUESTED')[0], 'APPROVAL_REQUESTED');
    // The runner "dies" here: what it leaves on disk is the spool and the approval journal.
    const crashed = path.join(h.tmp, 'crashed');
    await fs.promises.cp(h.dataDir, crashed, { recursive: true, filter: (src) => !src.includes(`${path.sep}worktrees${path.sep}`) && !src.includes(`${path.sep}homes${path.sep}`) });
    await h.manager.stopAll('the runner died');
    expect(mainOf(bare)).toBe(before);
    const log = captureLogger();
    const journal = new ApprovalJournal(path.join(crashed, 'approvals'), log);
    const spool2 = await Spool.open(path.join(crashed, 'spool'), { log, restartEvents: journal.takeLeftovers() });
    try {
      const after = spool2.pendingAfter(sid, 0).map((p) => p.event);
      const resolvedAt = after.findIndex((e) => e.type === 'APPROVAL_RESOLVED');
      const failedAt = after.findIndex((e) => e.type === 'SESSION_STATE_CHANGED' && e.to === 'FAILED');
      expect(after[resolvedAt]).toMatchObject({ approval_id: req.approval_id, decision: 'deny', reason: 'runner_restarted' });
      expect(resolvedAt).toBeGreaterThanOrEqual(0);
      expect(failedAt).toBeGreaterThan(resolvedAt);
      expect(fs.readdirSync(path.join(crashed, 'approvals'))).toEqual([]);
    } finally {
      spool2.close();
    }
  });
});

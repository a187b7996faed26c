import { describe, expect, it } from 'vitest';
import { planLaunch, spawnOf, type LaunchPlanInput } from './launch-plan';

const base: LaunchPlanInput = {
  sessionId: 'ses_1',
  command: { file: '/bin/bash', args: ['-i'] },
  env: { PATH: '/usr/bin', HOME: '/h' },
  cwd: '/wt/src',
  size: { cols: 80, rows: 24 },
  mode: 'write',
  worktree: '/wt',
  clone: '/clone.git',
  home: '/h',
  shims: null,
  forbidden: [],
  network: 'open',
  can: { readOnlyMount: false, guardNamespace: false },
};

describe('planLaunch (pure: inputs → what to spawn)', () => {
  it('without namespaces the command runs as it is, with the worktree and clone writable', () => {
    const plan = planLaunch(base);
    expect(plan.isolation).toBe('none');
    expect(spawnOf(plan)).toEqual(base.command);
    expect(plan.mounts.worktree).toEqual({ path: '/wt', writable: true });
    expect(plan.mounts.binds).toEqual([]);
  });

  it('a read-only session with the read-only mount available gets it; without, it runs as it is (detect and revert)', () => {
    const ro = planLaunch({ ...base, mode: 'read_only', can: { readOnlyMount: true, guardNamespace: false } });
    expect(ro.isolation).toBe('read_only_mount');
    expect(ro.mounts.worktree.writable).toBe(false);
    expect(spawnOf(ro).args).toContain('/wt');
    expect(planLaunch({ ...base, mode: 'read_only' }).isolation).toBe('none');
  });

  it('shims, forbidden files or restricted network with a namespace → the guard namespace with binds, read-only files and its own network', () => {
    const shims = { binDir: '/h/.agent-village/bin', configPath: '/h/g.json', binds: [['/usr', '/h/real/git'], ['/h/.agent-village/bin/git', '/usr/bin/git']] as Array<[string, string]> };
    const plan = planLaunch({ ...base, shims, forbidden: ['/wt/.env'], network: 'restricted', can: { readOnlyMount: true, guardNamespace: true } });
    expect(plan.isolation).toBe('guard_namespace');
    expect(plan.mounts.binds).toEqual(shims.binds);
    expect(plan.mounts.readOnly).toEqual(['/wt/.env']);
    const argv = spawnOf(plan);
    expect(argv.args).toContain('--net');
    const script = argv.args[argv.args.indexOf('-c') + 1];
    expect(script).toContain(`mount --bind -- '/h/.agent-village/bin/git' '/usr/bin/git'`);
    expect(script).toContain(`mount -o remount,bind,ro -- '/wt/.env'`);
    // The program comes last, unchanged.
    expect(argv.args.slice(-2)).toEqual(['/bin/bash', '-i']);
  });

  it('without a namespace, binds and forbidden files are not planned (PATH shims only)', () => {
    const shims = { binDir: '/b', configPath: '/c', binds: [['/usr', '/x']] as Array<[string, string]> };
    const plan = planLaunch({ ...base, shims, forbidden: ['/wt/.env'] });
    expect(plan.isolation).toBe('none');
    expect(plan.mounts.binds).toEqual([]);
    expect(plan.mounts.readOnly).toEqual([]);
  });

  it('with a sandbox: every session is sandboxed, read-only sessions read-only, and restricted egress gets the proxy variables', () => {
    const sandbox = { available: true, why: '', bwrap: '/usr/bin/bwrap', seccompFile: null, root: false, hidden: ['/data/runner', '/srv/control-plane'] };
    const plan = planLaunch({ ...base, network: 'restricted', allowHosts: ['registry.npmjs.org'], egressSocket: '/tmp/e/egress.sock', sockets: ['/tmp/hooks'], can: { readOnlyMount: false, guardNamespace: false, sandbox } });
    expect(plan.isolation).toBe('sandbox');
    expect(plan.mounts.hidden).toEqual(sandbox.hidden);
    expect(plan.mounts.sockets).toEqual(['/tmp/hooks']);
    expect(plan.network).toEqual({ mode: 'restricted', allowHosts: ['registry.npmjs.org'], egressSocket: '/tmp/e/egress.sock' });
    expect(plan.env).toMatchObject({ PATH: '/usr/bin', HTTPS_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'localhost,127.0.0.1,::1' });
    expect(spawnOf(plan).args).toContain('--unshare-pid');
    const ro = planLaunch({ ...base, mode: 'read_only', can: { readOnlyMount: false, guardNamespace: false, sandbox } });
    expect(ro.mounts.worktree.writable).toBe(false);
    expect(ro.mounts.clone.writable).toBe(false);
    // Open network: no proxy, no proxy variables.
    const open = planLaunch({ ...base, egressSocket: '/tmp/e/egress.sock', can: { readOnlyMount: false, guardNamespace: false, sandbox } });
    expect(open.network.egressSocket).toBeNull();
    expect(open.env).toEqual(base.env);
  });
});

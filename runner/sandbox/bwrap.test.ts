import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArgs, EGRESS_FORWARDER_PATH, EGRESS_PROXY_PORT, SECCOMP_FD, type BwrapInput } from './bwrap';

let tmp: string;
let input: BwrapInput;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bwrap-args-'));
  for (const d of ['data/worktrees/s1', 'data/repos/r.git/objects', 'data/repos/r.git/refs', 'data/repos/r.git/logs', 'data/repos/r.git/worktrees/s1', 'data/homes/s1', 'cp']) {
    fs.mkdirSync(path.join(tmp, d), { recursive: true });
  }
  fs.writeFileSync(path.join(tmp, 'cred'), 'x');
  input = {
    bwrap: '/usr/bin/bwrap',
    seccompFile: null,
    root: false,
    interactive: true,
    sessionId: 's1',
    command: { file: '/bin/bash', args: ['-i'] },
    cwd: path.join(tmp, 'data/worktrees/s1'),
    worktree: { path: path.join(tmp, 'data/worktrees/s1'), writable: true },
    clone: { path: path.join(tmp, 'data/repos/r.git'), writable: true },
    home: path.join(tmp, 'data/homes/s1'),
    binds: [['/usr', path.join(tmp, 'data/homes/s1/.agent-village/real/git')]],
    readOnly: [path.join(tmp, 'data/worktrees/s1/.env')],
    hidden: [path.join(tmp, 'data'), path.join(tmp, 'cp'), path.join(tmp, 'data', 'spool'), path.join(tmp, 'cred'), path.join(tmp, 'missing')],
    sockets: ['/tmp/av-hooks-x'],
    network: { mode: 'restricted', egressSocket: '/tmp/av-egress-x/egress.sock' },
    nodePath: '/usr/bin/node',
  };
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Index of the option `opt` with these operands. */
const at = (args: string[], ...seq: string[]) => args.findIndex((_, i) => seq.every((s, j) => args[i + j] === s));

describe('bwrapArgs (pure: a launch plan → bubblewrap argv)', () => {
  it('own namespaces, the machine read-only, fresh /dev, /proc and /tmp, dies with the runner', () => {
    const { file, args } = bwrapArgs(input);
    expect(file).toBe('/usr/bin/bwrap');
    for (const flag of ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net']) expect(args).toContain(flag);
    expect(at(args, '--ro-bind', '/', '/')).toBeGreaterThan(-1);
    expect(at(args, '--proc', '/proc')).toBeGreaterThan(-1);
    expect(at(args, '--tmpfs', '/tmp')).toBeGreaterThan(-1);
    // Interactive: keeps its terminal (no --new-session); an unprivileged runner has no caps to drop.
    expect(args).not.toContain('--new-session');
    expect(args).not.toContain('--cap-drop');
  });

  it('hidden paths are covered first (outermost only; a file by /dev/null; missing ones skipped), made read-only after the binds', () => {
    const { args } = bwrapArgs(input);
    const data = path.join(tmp, 'data');
    expect(at(args, '--tmpfs', data)).toBeGreaterThan(-1);
    expect(at(args, '--tmpfs', path.join(tmp, 'cp'))).toBeGreaterThan(-1);
    expect(at(args, '--tmpfs', path.join(data, 'spool'))).toBe(-1);
    expect(at(args, '--ro-bind', '/dev/null', path.join(tmp, 'cred'))).toBeGreaterThan(-1);
    expect(args.join(' ')).not.toContain('missing');
    const wtBind = at(args, '--bind', input.worktree.path, input.worktree.path);
    expect(at(args, '--tmpfs', data)).toBeLessThan(wtBind);
    expect(at(args, '--remount-ro', data)).toBeGreaterThan(at(args, '--ro-bind', '/tmp/av-egress-x', '/tmp/av-egress-x'));
  });

  it('the clone is read-only except what a commit writes; read-only sessions get worktree and clone read-only', () => {
    const clone = input.clone.path;
    const { args } = bwrapArgs(input);
    expect(at(args, '--ro-bind', clone, clone)).toBeGreaterThan(-1);
    for (const part of ['objects', 'refs', 'logs', 'worktrees/s1']) expect(at(args, '--bind', path.join(clone, part), path.join(clone, part))).toBeGreaterThan(at(args, '--ro-bind', clone, clone));
    expect(args.join(' ')).not.toContain(path.join(clone, 'config'));
    const ro = bwrapArgs({ ...input, worktree: { ...input.worktree, writable: false }, clone: { ...input.clone, writable: false } }).args;
    expect(at(ro, '--ro-bind', input.worktree.path, input.worktree.path)).toBeGreaterThan(-1);
    expect(at(ro, '--bind', path.join(clone, 'objects'), path.join(clone, 'objects'))).toBe(-1);
  });

  it('guard wrappers, forbidden files and the hook socket are bound read-only; the program runs behind the egress forwarder', () => {
    const { args } = bwrapArgs(input);
    expect(at(args, '--ro-bind', '/usr', input.binds[0]![1])).toBeGreaterThan(-1);
    expect(at(args, '--ro-bind', input.readOnly[0]!, input.readOnly[0]!)).toBeGreaterThan(at(args, '--bind', input.worktree.path, input.worktree.path));
    expect(at(args, '--ro-bind', '/tmp/av-hooks-x', '/tmp/av-hooks-x')).toBeGreaterThan(-1);
    expect(args.slice(args.indexOf('--') + 1)).toEqual(['/usr/bin/node', EGRESS_FORWARDER_PATH, '/tmp/av-egress-x/egress.sock', String(EGRESS_PROXY_PORT), '/bin/bash', '-i']);
    // Open network: the runner's network, the program directly.
    const open = bwrapArgs({ ...input, network: { mode: 'open', egressSocket: null } }).args;
    expect(open).not.toContain('--unshare-net');
    expect(open.slice(open.indexOf('--') + 1)).toEqual(['/bin/bash', '-i']);
  });

  it('a root runner drops every capability; a patrol gets a new session; a seccomp filter comes in on its fd through sh', () => {
    const r = bwrapArgs({ ...input, root: true, interactive: false, seccompFile: '/tmp/f.bpf' });
    expect(r.file).toBe('/bin/sh');
    expect(r.args.slice(0, 4)).toEqual(['-c', `exec ${SECCOMP_FD}<"$0" && exec "$@"`, '/tmp/f.bpf', '/usr/bin/bwrap']);
    expect(at(r.args, '--cap-drop', 'ALL')).toBeGreaterThan(-1);
    expect(r.args).toContain('--new-session');
    expect(at(r.args, '--seccomp', String(SECCOMP_FD))).toBeLessThan(r.args.indexOf('--'));
  });
});

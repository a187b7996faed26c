import { describe, expect, it } from 'vitest';
import { withoutServerDetail } from './viewer-text';

describe('withoutServerDetail (errors shown to people)', () => {
  it('drops URLs, internal hosts, addresses and absolute server paths, keeps the reason', () => {
    expect(withoutServerDetail("git clone failed: fatal: unable to access 'https://tok@git.corp.internal/acme/x.git/': Could not resolve host: git.corp.internal")).toBe(
      "git clone failed: fatal: unable to access '<repository URL>': Could not resolve host: <host>",
    );
    expect(withoutServerDetail('ssh: connect to host 10.1.2.3 port 22: Connection refused')).toBe('ssh: connect to host <host> port 22: Connection refused');
    expect(withoutServerDetail('Failed to connect to fd00::1 port 443')).toBe('Failed to connect to <host> port 443');
    expect(withoutServerDetail('fatal: repository git@10.0.0.9:team/app.git not found')).toBe('fatal: repository <repository URL> not found');
    expect(withoutServerDetail('worktree /var/lib/agent-village/runner/worktrees/sess_abc already exists')).toBe('worktree …/sess_abc already exists');
    expect(withoutServerDetail("fatal: '/srv/code/app/' does not appear to be a git repository")).toBe("fatal: '…/app' does not appear to be a git repository");
    expect(withoutServerDetail('no such room src/core (relative paths stay)')).toBe('no such room src/core (relative paths stay)');
    expect(withoutServerDetail('listening on 192.168.1.20')).toBe('listening on <address>');
  });
});

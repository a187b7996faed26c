import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { attachedRunnerIdentity, AttachedRunnerRefused } from './attached-runner';

/** Who the attached runner of `npm start` runs as (issue 11 item 1; README "Threat model"). */
describe('attachedRunnerIdentity', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'attached-id-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('as a normal user: the same user, and the runner must have a sandbox unless exposure is allowed explicitly', () => {
    const d = tmp();
    const id = attachedRunnerIdentity({ dataDir: d, runnerDataDir: path.join(d, 'runner'), isRoot: false, env: { HOME: '/home/x' } });
    expect(id.uid).toBeUndefined();
    expect(id).toMatchObject({ sandbox: 'required', dataDir: path.join(d, 'runner') });
    const allowed = attachedRunnerIdentity({ dataDir: d, runnerDataDir: path.join(d, 'runner'), isRoot: false, env: { AGENT_VILLAGE_ALLOW_EXPOSED_DATA: '1' } });
    expect(allowed.sandbox).toBe('auto');
    expect(allowed.notes.join(' ')).toMatch(/ALLOW_EXPOSED_DATA/);
  });

  it('refuses a bad or root runner user name with a clear message', () => {
    const d = tmp();
    expect(() => attachedRunnerIdentity({ dataDir: d, runnerDataDir: path.join(d, 'runner'), isRoot: true, env: { AGENT_VILLAGE_RUNNER_USER: 'Bad Name!' } })).toThrow(AttachedRunnerRefused);
    expect(() => attachedRunnerIdentity({ dataDir: d, runnerDataDir: path.join(d, 'runner'), isRoot: true, env: { AGENT_VILLAGE_RUNNER_USER: 'root' } })).toThrow(/is root/);
  });

  it('as root: an unprivileged user; DATA_DIR traversable only, database and key private, the runner folder the runner user’s', (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip();
    const user = process.env.AV_TEST_USER || 'avtest';
    let uid: number;
    try {
      uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    } catch {
      console.warn(`skipped: no user "${user}" (.ci/run creates it)`);
      return ctx.skip();
    }
    const d = tmp();
    fs.writeFileSync(path.join(d, 'village.db'), 'db', { mode: 0o644 });
    fs.writeFileSync(path.join(d, 'secret.key'), 'k', { mode: 0o644 });
    fs.mkdirSync(path.join(d, 'demo-repo'), { mode: 0o755 });
    const id = attachedRunnerIdentity({ dataDir: d, runnerDataDir: path.join(d, 'runner'), isRoot: true, env: { AGENT_VILLAGE_RUNNER_USER: user } });
    expect(id.uid).toBe(uid);
    expect(fs.statSync(d).mode & 0o777).toBe(0o711);
    expect(fs.statSync(path.join(d, 'village.db')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(d, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(d, 'runner')).uid).toBe(uid);
    // Checked as that user: the database is unreadable, the demo repository readable.
    const can = (p: string) => {
      try {
        execFileSync('su', [user, '-s', '/bin/sh', '-c', `test -r '${p}'`]);
        return true;
      } catch {
        return false;
      }
    };
    expect(can(path.join(d, 'village.db'))).toBe(false);
    expect(can(path.join(d, 'secret.key'))).toBe(false);
    expect(can(path.join(d, 'demo-repo'))).toBe(true);
  });
});

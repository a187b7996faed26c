import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeSandbox, sandboxCommand } from './index';

describe('sandboxCommand (DTA runs, work items)', () => {
  it('runs a plain command in the sandbox: its folder writable, its own PID 1, the hidden folder empty, no network', async (ctx) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-cmd-'));
    try {
      const work = path.join(dir, 'work');
      const home = path.join(dir, 'home');
      const secret = path.join(dir, 'secret');
      for (const d of [work, home, secret]) fs.mkdirSync(d);
      fs.writeFileSync(path.join(secret, 'key'), 'k');
      const support = await probeSandbox({ dir: path.join(dir, 'probe'), hidden: [secret] });
      if (!support.available) return ctx.skip();
      const script = `echo ok > ${work}/out; echo pid1=$(tr '\\0' ' ' < /proc/1/cmdline | cut -c1-14); ls -A ${secret} | wc -l; ip -o link | wc -l`;
      const c = sandboxCommand(support, { command: { file: '/bin/sh', args: ['-c', script] }, cwd: work, workdir: { path: work, writable: true }, home });
      const out = execFileSync(c.file, c.args, { encoding: 'utf8' });
      expect(fs.readFileSync(path.join(work, 'out'), 'utf8')).toBe('ok\n');
      expect(out).toContain('pid1=/usr/bin/bwrap');
      expect(out.split('\n').slice(1, 3)).toEqual(['0', '1']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seccompProgram } from './seccomp';
import { BWRAP_PATH } from './bwrap';

describe('seccomp program', () => {
  it('is a whole number of 8-byte BPF instructions for x64 and arm64; none for other CPUs', () => {
    for (const arch of ['x64', 'arm64']) {
      const p = seccompProgram(arch)!;
      expect(p.length % 8).toBe(0);
      expect(p.length / 8).toBeGreaterThan(30);
    }
    expect(seccompProgram('mips')).toBeNull();
  });

  it('under bubblewrap it refuses new namespaces and mounts, and ordinary programs still run', (ctx) => {
    const program = seccompProgram();
    if (!program || !fs.existsSync(BWRAP_PATH)) return ctx.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seccomp-'));
    const file = path.join(dir, 'f.bpf');
    fs.writeFileSync(file, program);
    try {
      const script = [
        'unshare -U true 2>/dev/null && echo unshare=allowed || echo unshare=refused',
        'unshare -m true 2>/dev/null && echo mountns=allowed || echo mountns=refused',
        'node -e "require(\'child_process\').execFileSync(\'true\'); console.log(\'node=ok\')"',
        'git --version >/dev/null && echo git=ok',
      ].join('; ');
      const root = process.getuid?.() === 0 ? ['--cap-drop', 'ALL'] : [];
      const out = execFileSync('/bin/sh', ['-c', 'exec 9<"$0" && exec "$@"', file, BWRAP_PATH, '--die-with-parent', '--unshare-all', ...root, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--seccomp', '9', '--', '/bin/sh', '-c', script], { encoding: 'utf8' });
      expect(out).toContain('unshare=refused');
      expect(out).toContain('mountns=refused');
      expect(out).toContain('node=ok');
      expect(out).toContain('git=ok');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

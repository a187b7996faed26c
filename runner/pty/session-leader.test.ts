import fs from 'node:fs';
import type { IPty } from 'node-pty';
import { describe, expect, it } from 'vitest';
import { spawnLed } from './led-pty';

/** Runs of the fast producer: the loss it fixes showed in about half the runs, so 20 make it certain. */
const RUNS = 20;
const LINES = 300_000;

function start(cmd: string): IPty {
  return spawnLed('bash', ['-c', cmd], { name: 'xterm-256color', cols: 80, rows: 24, cwd: '/tmp', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
}

function exited(p: IPty): Promise<{ exitCode: number; signal?: number }> {
  return new Promise((res) => p.onExit(res));
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const n of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) === pid && rest[0] !== 'Z') out.push(Number(n));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

async function until(fn: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function expectLines(out: string, n: number) {
  expect(out).not.toContain('av-leader');
  const lines = out.split('\r\n');
  expect(lines.at(-1)).toBe('');
  lines.pop();
  expect(lines.length).toBe(n);
  for (let i = 0; i < n; i++) if (lines[i] !== String(i + 1)) expect(`line ${i}: ${lines[i]}`).toBe(`line ${i}: ${i + 1}`);
}

describe('session leader: the end of PTY output is deterministic', () => {
  it(`keeps every line of a fast producer that exits at once, read slowly, ${RUNS} runs`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const p = start(`seq 1 ${LINES}`);
      let out = '';
      // A slow reader: every read pauses the PTY (as flow control does) and resumes a moment later.
      p.onData((d) => {
        out += d;
        p.pause();
        setTimeout(() => p.resume(), 2);
      });
      const { exitCode, signal } = await exited(p);
      expect(exitCode).toBe(0);
      expect(signal ?? 0).toBe(0);
      expectLines(out, LINES);
    }
  }, 300_000);

  it('holds while the PTY stays paused past the command’s exit', async () => {
    const p = start('seq 1 500');
    p.pause();
    let out = '';
    p.onData((d) => (out += d));
    let done = false;
    void exited(p).then(() => (done = true));
    // The command has ended and its output sits unread in the paused PTY; the leader waits.
    await until(() => childrenOf(p.pid).length === 0, 'the command to exit');
    expect(done).toBe(false);
    p.resume();
    await until(() => done, 'the leader to exit');
    expectLines(out, 500);
  });

  it('exits with the command’s code, dies of its signal, and says when it cannot start it', async () => {
    const code = start('echo bye; exit 7');
    let out = '';
    code.onData((d) => (out += d));
    expect(await exited(code)).toMatchObject({ exitCode: 7 });
    expect(out).toBe('bye\r\n');

    const killed = start('kill -TERM $$');
    expect((await exited(killed)).signal).toBe(15);

    const missing = spawnLed('/nonexistent/agent', [], { cols: 80, rows: 24, cwd: '/tmp', env: {} });
    let text = '';
    missing.onData((d) => (text += d));
    expect((await exited(missing)).exitCode).toBe(127);
    expect(text).toContain('cannot start /nonexistent/agent');
  });

  it('passes SIGHUP and SIGTERM sent to the leader on to the command (Stop)', async () => {
    const p = start('trap "echo got-term; exit 3" TERM; echo ready; while :; do sleep 0.05; done');
    let out = '';
    p.onData((d) => (out += d));
    await until(() => out.includes('ready'), 'the command to start');
    process.kill(p.pid, 'SIGTERM');
    expect((await exited(p)).exitCode).toBe(3);
    expect(out).toContain('got-term');
  });
});

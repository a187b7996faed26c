import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { freePort } from './free-port';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../protocol';
import { Api, rememberSetupToken, ROOT, TerminalWatcher, uiSocket, waitFor } from './harness';
import { CONTROL_PLANE_ARGS } from '../heap-growth';

/**
 * Issue 11 "keep it that way": kill -9 the runner, the server or both at seeded random points
 * while sessions print fast and paced numbered lines; restart them; the stored output of every
 * session must be lines 1…k in order with none repeated and the seqs 1…n without a hole — and
 * all N lines when the runner (which owns the process) was never killed. FAULT_SEED replays a run.
 */
const SEED = Number(process.env.FAULT_SEED ?? 20261126);
const FAST_LINES = 500_000;
const PACED_LINES = 250;
/** Paced: a line every 20 ms, so the output lasts seconds and a kill lands in it. */
const PACED_SLEEP_S = 0.02;
/** Rounds of (kill plan × one paced and one fast session): every plan once, in a seeded order (EXTRA_ROUNDS more drawn at random). */
const PLANS = ['none', 'server', 'runner', 'both'] as const;
const EXTRA_ROUNDS = 0;
/**
 * The kill comes this long after both commands were typed, drawn per round: the fast output lasts
 * about the first second or two, the paced one several seconds, so kills land inside either.
 */
const KILL_DELAY_MS = { min: 0, max: 2_500 };

/** mulberry32: a small seeded generator, so a failing run can be repeated exactly. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}


function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => child.once('exit', () => res()));
}

describe('delivery under kill -9 of runner and server (seeded)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'av-fault-'));
  let port: number;
  let url: string;
  let server: ChildProcess | null = null;
  let runner: ChildProcess | null = null;
  let token: string;
  const api = () => new Api(url);
  let client: Api;

  async function startServer() {
    const logs: string[] = [];
    const child = spawn(process.execPath, [...CONTROL_PLANE_ARGS], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        NEXT_TELEMETRY_DISABLED: '1',
        AGENT_VILLAGE_ATTACHED_RUNNER: '0',
        AGENT_VILLAGE_DEFAULT_PLAN: 'enterprise',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((res, rej) => {
      child.stdout!.on('data', (b: Buffer) => {
        logs.push(b.toString());
        if (/listening on/.test(logs.join(''))) res();
      });
      child.stderr!.on('data', (b: Buffer) => logs.push(b.toString()));
      child.once('exit', (code) => rej(new Error(`server exited with ${code}:\n${logs.join('')}`)));
    });
    server = child;
    // The first start prints the first-run link; setupAdmin() sends its token.
    rememberSetupToken(url, logs);
  }

  function startRunner() {
    runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', url, '--name', 'fault-1', '--data-dir', join(dataDir, 'remote-runner'), '--capacity', '8'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }

  async function kill(which: 'server' | 'runner') {
    const child = which === 'server' ? server : runner;
    child!.kill('SIGKILL');
    await exited(child!);
  }

  async function runnerOnline() {
    await waitFor(async () => (await client.world()).runners.some((r) => r.online), 'the runner online', 60_000);
  }

  beforeAll(async () => {
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    await startServer();
    client = api();
    await client.setupAdmin();
    token = (await client.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'fault' })).token;
    startRunner();
    await runnerOnline();
  }, 180_000);

  afterAll(async () => {
    runner?.kill('SIGKILL');
    server?.kill('SIGKILL');
    await Promise.all([runner && exited(runner), server && exited(server)]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`stored output is a contiguous prefix without duplicates, complete unless the runner died (seed ${SEED})`, async () => {
    const random = rng(SEED);
    const order = [...PLANS].sort(() => random() - 0.5);
    for (let i = 0; i < EXTRA_ROUNDS; i++) order.push(PLANS[Math.floor(random() * PLANS.length)]!);
    const repo = await client.readyRepo();
    const summary: string[] = [];

    for (const [round, plan] of order.entries()) {
      const killDelay = KILL_DELAY_MS.min + Math.floor(random() * (KILL_DELAY_MS.max - KILL_DELAY_MS.min));
      const sessions: Array<{ id: string; kind: 'fast' | 'paced'; lines: number }> = [];
      for (const kind of ['paced', 'fast'] as const) {
        const s = await client.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: 'src', provider: 'shell', title: `r${round} ${kind}` });
        await client.waitState(s.id, ['RUNNING']);
        sessions.push({ id: s.id, kind, lines: kind === 'fast' ? FAST_LINES : PACED_LINES });
      }
      // Both start printing together, the paced one first (the fast one is over in a second or two).
      for (const s of sessions) {
        const cmd = s.kind === 'fast' ? `seq -f L%g 1 ${s.lines}; exit\r` : `for i in $(seq 1 ${s.lines}); do echo L$i; sleep ${PACED_SLEEP_S}; done; exit\r`;
        await client.ok('POST', `/api/sessions/${s.id}/input`, { data: cmd });
      }
      if (plan !== 'none') {
        // A seeded point in the output (where a kill lands is the point of the test, not a timing assertion).
        await new Promise((res) => setTimeout(res, killDelay));
        // Both at once for 'both': no orderly hand-over between the two deaths.
        await Promise.all([plan !== 'runner' && kill('server'), plan !== 'server' && kill('runner')]);
        if (plan === 'server' || plan === 'both') await startServer();
        if (plan === 'runner' || plan === 'both') startRunner();
        await runnerOnline();
      }
      for (const s of sessions) {
        const end = await client.waitState(s.id, ['COMPLETED', 'FAILED'], 120_000);
        const w = new TerminalWatcher(await uiSocket(url, client.cookie), s.id);
        await w.attach();
        w.socket.close();
        const seqs = w.events.map((e) => e.seq);
        seqs.forEach((seq, i) => expect(seq, `r${round} ${s.kind}: seq #${i}`).toBe(i + 1));
        // A line starts after a newline, or after the CR bash prints when it leaves bracketed paste.
        const nums = [...w.text().matchAll(/(?<=^|[\r\n])L(\d+)(?=\r\n)/g)].map((m) => Number(m[1]));
        const firstWrong = nums.findIndex((n, i) => n !== i + 1);
        expect(firstWrong, `r${round} ${s.kind} (${plan}): line #${firstWrong} is L${nums[firstWrong]}`).toBe(-1);
        const runnerDied = plan === 'runner' || plan === 'both';
        if (!runnerDied) {
          expect(nums.length, `r${round} ${s.kind} (${plan}): every line stored`).toBe(s.lines);
          expect(end.state).toBe('COMPLETED');
        } else if (end.state === 'FAILED') {
          // The process died with the runner: what could not be spooled is an explicit gap.
          expect(w.events.some((e) => e.type === 'OUTPUT_GAP')).toBe(true);
        }
        summary.push(`r${round} ${plan}${plan === 'none' ? '' : ` after ${killDelay} ms`} ${s.kind}: ${nums.length}/${s.lines} lines, ${seqs.length} events, ${end.state}`);
      }
    }
    console.log(`[fault] seed ${SEED}\n${summary.join('\n')}`);
  }, 600_000);
});

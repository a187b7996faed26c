/**
 * 50 concurrent shell sessions on one runner, 2 of them flooding output (`yes`, watched by a
 * viewer that acks like a browser). Prints keystroke echo latency p50/p99 for the 48 quiet ones
 * (type a marker → see it echoed back through runner → server → viewer), the runner's event-loop
 * lag (p99, from its heartbeats) and its memory. Asserts nothing.
 * Usage: npm run bench:sessions   (needs `npm run build`)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunnerSummary, SessionSummary } from '../protocol';
import { MAX_ATTACHED_PER_SOCKET } from '../server/realtime/ui-limits';
import { Api, ROOT, startStack, TerminalWatcher, uiSocket, type UiClient } from '../server/integration/harness';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 50);
const FLOODERS = Number(process.env.BENCH_FLOODERS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function main() {
  const stack = await startStack({ attachedRunner: false });
  const api = new Api(stack.url);
  await api.setupAdmin();
  const token = (await api.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'bench' })).token;
  const runner = spawn(process.execPath, ['--import', 'tsx', 'runner/index.ts', '--server', stack.url, '--name', 'bench', '--data-dir', join(stack.dataDir, 'bench-runner')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AGENT_RUNNER_TOKEN: token, AGENT_RUNNER_CAPACITY: String(SESSIONS + 5) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const repo = await api.readyRepo();
    const rssIdle = rssMb(runner.pid!);
    const t0 = Date.now();
    const sessions: SessionSummary[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      sessions.push(await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' }));
    }
    for (const s of sessions) await api.waitState(s.id, ['RUNNING'], 120_000);
    console.log(`${SESSIONS} sessions running after ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    // A socket may attach MAX_ATTACHED_PER_SOCKET terminals (server/realtime/ui-limits.ts): a tab per group.
    const sockets: UiClient[] = [];
    const watchers = [];
    for (const [i, s] of sessions.entries()) {
      if (i % MAX_ATTACHED_PER_SOCKET === 0) sockets.push(await uiSocket(stack.url, api.cookie));
      const w = new TerminalWatcher(sockets.at(-1)!, s.id);
      await w.attach();
      watchers.push(w);
    }
    for (const w of watchers.slice(0, FLOODERS)) await w.type('yes "flooding the terminal with output"\r');
    await new Promise((r) => setTimeout(r, 2000));

    const quiet = watchers.slice(FLOODERS);
    const latencies: number[] = [];
    // Resolve the moment the marker's echo arrives (polling would blur the figure by its interval).
    const pending = new Map<string, { marker: string; seen: string; done: () => void }>();
    const onEvents = (b: { session_id: string; events: Array<{ data?: string }> }) => {
      const p = pending.get(b.session_id);
      if (!p) return;
      p.seen += b.events.map((e) => e.data ?? '').join('');
      if (p.seen.includes(p.marker)) {
        pending.delete(b.session_id);
        p.done();
      }
    };
    for (const socket of sockets) socket.on('session:events', onEvents);
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        quiet.map(async (w, i) => {
          const marker = `#m${round}x${i}q`;
          const echoed = new Promise<void>((done) => pending.set(w.sessionId, { marker, seen: '', done }));
          const start = performance.now();
          await w.type(marker);
          await echoed;
          latencies.push(performance.now() - start);
          await w.type('\x15'); // Ctrl-U: clear the line again
        }),
      );
    }
    const rssLoaded = rssMb(runner.pid!);
    const runners = await api.ok<RunnerSummary[]>('GET', '/api/runners');
    const lag = runners[0]?.event_loop_lag_ms;
    const flooded = watchers.slice(0, FLOODERS).reduce((n, w) => n + w.text().length, 0) / (1024 * 1024);
    console.log(
      `keystroke echo latency, ${quiet.length} quiet sessions × ${ROUNDS} rounds while ${FLOODERS} flood (${flooded.toFixed(0)} MB shown): ` +
        `p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms`,
    );
    console.log(`runner event-loop lag (p99 over its last heartbeat interval): ${lag === null || lag === undefined ? 'not reported' : `${lag.toFixed(1)} ms`}`);
    console.log(`runner memory (RSS): ${rssIdle.toFixed(0)} MB idle, ${rssLoaded.toFixed(0)} MB with ${SESSIONS} sessions`);
    for (const w of watchers.slice(0, FLOODERS)) await w.type('\x03');
    sockets.forEach((s) => s.close());
  } finally {
    runner.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    runner.kill('SIGKILL');
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { io } from 'socket.io-client';

const PORT = 3126;
const base = `http://127.0.0.1:${PORT}`;
const dataDir = mkdtempSync(join(tmpdir(), 'av-shots-'));
const server = spawn(process.execPath, ['--import', 'tsx', 'server/index.ts'], {
  env: { ...process.env, PORT: String(PORT), HOST: '127.0.0.1', DATA_DIR: dataDir, NODE_ENV: 'production', AGENT_VILLAGE_DEFAULT_PLAN: 'free' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise<void>((res) => server.stdout!.on('data', (b: Buffer) => /listening/.test(b.toString()) && res()));
let cookie = '';
async function req(method: string, path: string, body?: unknown) {
  const r = await fetch(base + path, { method, headers: { 'content-type': 'application/json', origin: base, cookie }, body: body ? JSON.stringify(body) : undefined });
  const sc = r.headers.get('set-cookie');
  if (sc) cookie = sc.split(';')[0]!;
  return (await r.json()) as { ok: boolean; data: any; error?: any };
}
try {
  await req('POST', '/api/setup', { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada' });
  let repo: any;
  for (;;) {
    repo = (await req('GET', '/api/world')).data.repos.find((r: any) => r.status === 'ready');
    if (repo) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  const token = (await req('POST', '/api/runner-tokens', { name: 'fake' })).data.token;
  const fake = io(`${base}/runner`, { transports: ['websocket'], auth: { token } });
  const created: any[] = [];
  fake.on('session:create', (cmd: any, ack: any) => { created.push(cmd); ack({ ok: true, data: { session_id: cmd.session_id } }); });
  fake.on('repo:scan', (_c: any, ack: any) => ack({ ok: false, error: { code: 'RUNNER_ERROR', message: 'no' } }));
  await new Promise((r) => fake.once('connect', r));
  await fake.emitWithAck('runner:register', { name: 'fake', hostname: 'h', version: '0', capacity: 10, providers: ['claude', 'codex', 'gemini'], sessions: [] });
  const now = Date.now();
  const day0 = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
  for (const [provider, hours] of [['claude', 9], ['codex', 5], ['gemini', 3]] as const) {
    const s = (await req('POST', '/api/sessions', { repo_id: repo.id, room_path: 'src', provider })).data;
    const cmd = created.find((c) => c.session_id === s.id);
    const b = { session_id: s.id, org_id: cmd.org_id, repo_id: cmd.repo_id, repo_ref: cmd.repo };
    let seq = 0;
    const events: any[] = [];
    const days = Math.max(1, Math.floor((now - day0) / 86400000));
    for (let d = 0; d < days; d++) {
      const n = Math.floor(hours * 2 * (0.5 + ((d * 7 + provider.length) % 5) / 5));
      for (let i = 0; i < n; i++) events.push({ ...b, type: 'USAGE_TICK', ts: now, seq: ++seq, provider, window_start: day0 + d * 86400000 + 9 * 3600000 + i * 30000, units: { agent_seconds: 30, terminal_kb: 2, files_touched: 1, provider_invocations: i % 4 === 0 ? 1 : 0 } });
    }
    for (let i = 0; i < events.length; i += 500) await fake.emitWithAck('runner:events', events.slice(i, i + 500));
    await fake.emitWithAck('runner:events', [{ ...b, type: 'SESSION_STATE_CHANGED', ts: now, seq: ++seq, from: 'CREATED', to: 'COMPLETED', reason: 'done' }]);
  }
  const shell = (await req('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' })).data;
  await new Promise((r) => setTimeout(r, 4000));
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, extraHTTPHeaders: {} });
  await ctx.addCookies([{ name: cookie.split('=')[0]!, value: cookie.split('=').slice(1).join('='), url: base }]);
  const page = await ctx.newPage();
  for (const [path, name] of [['/usage', 'usage'], ['/billing', 'billing'], ['/', 'village']] as const) {
    await page.goto(base + path);
    await page.waitForTimeout(2500);
    await page.screenshot({ path: `/tmp/shots5/${name}.png`, fullPage: true });
  }
  // Free plan concurrency 1 → the spawn box says so.
  const plans = (await req('GET', '/api/plans')).data.plans;
  const { id: _i, ...free } = plans.find((p: any) => p.id === 'free');
  await req('PUT', '/api/plans/free', { ...free, max_concurrent_sessions: 1 });
  await page.goto(base + '/');
  await page.waitForTimeout(2500);
  await page.screenshot({ path: '/tmp/shots5/village-limit.png' });
  await req('POST', `/api/sessions/${shell.id}/stop`);
  await browser.close();
  fake.close();
} finally {
  server.kill('SIGTERM');
}

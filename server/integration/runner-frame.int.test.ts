import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../common/redact';
import { FRAME_LIMITS, type CreateSessionCommand, type Result, type RunnerRegistered, type SessionSummary } from '../../protocol';
import { Api, call, runnerSocket, startStack, TerminalWatcher, uiSocket, waitFor, type Stack, type UiClient } from './harness';

/**
 * The runner's binary event frames (protocol/runner-frame.ts) on the real control plane: a runner
 * played by a test socket (offering gemini, which the attached runner lacks) sends its output as
 * raw UTF-8 attachments. Inconsistent frames are refused with a reason and store nothing; JSON
 * batches (an older runner) still work on the same socket.
 */
describe('runner event frames on the real control plane', () => {
  let stack: Stack;
  let admin: Api;
  let ui: UiClient;
  let fake: Awaited<ReturnType<typeof runnerSocket>>;
  const created: CreateSessionCommand[] = [];
  let registered: Result<RunnerRegistered>;

  beforeAll(async () => {
    stack = await startStack();
    admin = new Api(stack.url);
    await admin.setupAdmin();
    await admin.readyRepo();
    const token = (await admin.ok<{ token: string }>('POST', '/api/runner-tokens', { name: 'framer' })).token;
    fake = await runnerSocket(stack.url, token);
    fake.on('session:create', (cmd, ack) => {
      created.push(cmd as CreateSessionCommand);
      ack({ ok: true, data: { session_id: cmd.session_id } });
    });
    registered = await call<RunnerRegistered>(fake, 'runner:register', { name: 'framer', hostname: 'h', version: '0', capacity: 4, providers: ['gemini'], sessions: [] });
  });
  afterAll(async () => {
    ui?.close();
    fake?.close();
    await stack?.stop();
  });

  /** A session on the test's runner, brought to RUNNING by a frame of state changes; its events' common fields. */
  async function runningSession() {
    const repoId = (await admin.readyRepo()).id;
    const s = await admin.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'gemini' });
    const cmd = await waitFor(() => created.find((c) => c.session_id === s.id), 'the create command');
    const base = { session_id: s.id, org_id: cmd.org_id, repo_id: cmd.repo_id, repo_ref: cmd.repo, ts: Date.now() };
    const up = (['PREPARING_WORKSPACE', 'STARTING_PROVIDER', 'RUNNING'] as const).map((to, i, all) => ({
      ...base,
      type: 'SESSION_STATE_CHANGED',
      seq: i + 1,
      from: i === 0 ? 'CREATED' : all[i - 1],
      to,
      reason: 'up',
    }));
    // Events without text travel in the JSON part of a frame with an empty attachment.
    expect(await call(fake, 'runner:frame', { v: 1, events: up, data: Buffer.alloc(0) })).toEqual({ ok: true, data: { acked: [{ session_id: s.id, seq: 3 }] } });
    await admin.waitState(s.id, ['RUNNING']);
    return { s, base };
  }

  it('stores and shows frame output byte for byte; refuses bad frames with a reason, storing nothing; JSON batches still work', async () => {
    // The register answer is how a runner learns it may send frames.
    expect(registered.ok && registered.data.frames).toBe(1);
    const { s, base } = await runningSession();

    const texts = ['héllo € ', '😀 wörld\r\n', '"quoted" \\ \x1b[32mgreen\x1b[0m\r\n'];
    const head = (seq: number, bytes: number) => ({ ...base, type: 'TERMINAL_CHUNK', seq, bytes });
    const bytes = texts.map((t) => Buffer.from(t));
    const good = { v: 1, events: bytes.map((b, i) => head(4 + i, b.byteLength)), data: Buffer.concat(bytes) };
    const emoji = Buffer.from('😀');

    const bad: Array<[string, unknown, RegExp]> = [
      ['lengths short of the data', { ...good, data: Buffer.concat([good.data, Buffer.from('x')]) }, /the events claim \d+ bytes but the frame carries \d+/],
      ['lengths past the data', { ...good, data: good.data.subarray(0, 5) }, /events\.\d: claims bytes/],
      ['a character split across events', { v: 1, events: [head(4, 2), head(5, 2)], data: emoji }, /events\.0: its 2 bytes are not whole UTF-8 characters/],
      ['too big', { v: 1, events: [head(4, FRAME_LIMITS.DATA_BYTES + 1)], data: Buffer.alloc(FRAME_LIMITS.DATA_BYTES + 1, 0x61) }, /must be at most/],
      ['text as a string', { ...good, data: good.data.toString() }, /data: must be binary/],
      ['a bad event inside', { ...good, events: [good.events[0], { ...good.events[1], seq: 'five' }, good.events[2]] }, /seq/],
    ];
    for (const [what, frame, reason] of bad) {
      const res = await call(fake, 'runner:frame', frame);
      expect(res.ok, what).toBe(false);
      if (!res.ok) {
        expect(res.error.code, what).toBe('BAD_REQUEST');
        expect(res.error.message, what).toMatch(reason);
      }
    }
    // Nothing of the refused frames was stored: seq 4 onwards is still free for the good frame.
    expect(await call(fake, 'runner:frame', good)).toEqual({ ok: true, data: { acked: [{ session_id: s.id, seq: 6 }] } });
    // An older runner's JSON batch on the same socket.
    const json = [{ ...base, type: 'TERMINAL_CHUNK', seq: 7, data: 'from JSON ✓\r\n' }];
    expect(await call(fake, 'runner:events', json)).toEqual({ ok: true, data: { acked: [{ session_id: s.id, seq: 7 }] } });

    // A viewer attaching now replays what was stored: exactly the good frame's text, then the JSON's.
    ui = await uiSocket(stack.url, admin.cookie);
    const watcher = new TerminalWatcher(ui, s.id);
    await watcher.attach();
    await watcher.waitText('from JSON ✓');
    expect(watcher.text()).toBe(texts.join('') + 'from JSON ✓\r\n');
    expect(watcher.events.filter((e) => e.type === 'TERMINAL_CHUNK').map((e) => e.seq)).toEqual([4, 5, 6, 7]);
    expect((await admin.request('GET', '/api/me')).status).toBe(200);
  });

  it('sends a live binary viewer the runner’s own bytes only for text the control plane left as it was: a masked chunk goes out masked', async () => {
    const { s, base } = await runningSession();
    const viewer = await uiSocket(stack.url, admin.cookie);
    try {
      const live: Buffer[] = [];
      viewer.on('terminal:output', (f) => {
        if (f.session_id === s.id) live.push(Buffer.from(f.data instanceof ArrayBuffer ? new Uint8Array(f.data) : f.data));
      });
      const replayed = new Promise<void>((resolve) => viewer.on('session:replayed', (b) => b.session_id === s.id && resolve()));
      const attached = await call(viewer, 'session:attach', { session_id: s.id, after_seq: 3, binary: true });
      expect(attached.ok).toBe(true);
      await replayed;

      const TOKEN = `ghp_${'k9Lm'.repeat(9)}`;
      const texts = ['plain é, nothing to mask\r\n', `export GH=${TOKEN}\r\n`, 'after ✓\r\n'];
      const bytes = texts.map((t) => Buffer.from(t));
      const frame = { v: 1, events: bytes.map((b, i) => ({ ...base, type: 'TERMINAL_CHUNK', seq: 4 + i, bytes: b.byteLength })), data: Buffer.concat(bytes) };
      expect(await call(fake, 'runner:frame', frame)).toEqual({ ok: true, data: { acked: [{ session_id: s.id, seq: 6 }] } });
      await waitFor(() => Buffer.concat(live).toString().includes('after ✓'), 'the live output');
      expect(Buffer.concat(live).toString()).toBe(`plain é, nothing to mask\r\nexport GH=ghp_${REDACTED}\r\nafter ✓\r\n`);
    } finally {
      viewer.close();
    }
  });
});

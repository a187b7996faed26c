import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TerminalOutputFrameSchema, type MeDetails, type Role, type SessionSummary, type WireEvent } from '../../protocol';
import { Api, call, startStack, uiSocket, waitFor, type Stack, type UiClient } from './harness';

const PASSWORD = 'a long enough password';

/**
 * A browser-like viewer that asks for binary frames (`binary: true`): it checks every frame with
 * the protocol's schema, decodes the bytes, and acks after "parsing" like xterm does.
 */
class BinaryViewer {
  text = '';
  frames = 0;
  lastSeq = 0;
  badFrames = 0;
  readonly seqs: number[] = [];
  readonly events: WireEvent[] = [];
  private readonly decoder = new TextDecoder();

  constructor(
    readonly socket: UiClient,
    readonly sessionId: string,
  ) {
    socket.on('terminal:output', (raw) => {
      const parsed = TerminalOutputFrameSchema.safeParse(raw);
      if (!parsed.success) {
        this.badFrames++;
        return;
      }
      const f = parsed.data;
      if (f.session_id !== sessionId) return;
      this.frames++;
      let offset = 0;
      f.sizes.forEach((size, i) => {
        this.seqs.push(f.from_seq + i);
        this.text += this.decoder.decode(f.data.subarray(offset, offset + size));
        offset += size;
      });
      this.lastSeq = f.from_seq + f.sizes.length - 1;
      socket.emit('terminal:ack', { session_id: sessionId, seq: this.lastSeq });
    });
    socket.on('session:events', (b) => {
      if (b.session_id !== sessionId) return;
      for (const e of b.events) {
        this.seqs.push(e.seq);
        this.events.push(e);
        if (e.type === 'TERMINAL_CHUNK') this.text += e.data ?? '';
      }
    });
  }

  async attach() {
    let replayed = false;
    this.socket.once('session:replayed', () => (replayed = true));
    const res = await call(this.socket, 'session:attach', { session_id: this.sessionId, after_seq: 0, binary: true });
    if (!res.ok) throw new Error(res.error.message);
    await waitFor(() => replayed, 'replay to finish');
  }

  type(data: string) {
    return call<null>(this.socket, 'terminal:input', { session_id: this.sessionId, data });
  }

  waitText(needle: string, timeoutMs = 30_000) {
    return waitFor(() => this.text.includes(needle), `"${needle}" in the terminal`, timeoutMs);
  }
}

describe('the live terminal path: binary frames, keys without per-key reads, rights that follow changes', () => {
  let stack: Stack;
  let admin: Api;
  let repoId: string;
  const sockets: UiClient[] = [];

  async function join(email: string, role: Role): Promise<Api> {
    const { token } = await admin.ok<{ token: string }>('POST', '/api/invites', { email, role });
    const api = new Api(stack.url);
    await api.ok('POST', '/api/invites/accept', { token, name: email.split('@')[0], password: PASSWORD });
    return api;
  }
  async function viewerFor(api: Api, sessionId: string) {
    const s = await uiSocket(stack.url, api.cookie);
    sockets.push(s);
    const v = new BinaryViewer(s, sessionId);
    await v.attach();
    return v;
  }
  async function shell(): Promise<SessionSummary> {
    const s = await admin.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repoId, room_path: '', provider: 'shell' });
    await admin.waitState(s.id, ['RUNNING']);
    return s;
  }

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_RUNNER_CAPACITY: '8' } });
    admin = new Api(stack.url);
    await admin.setupAdmin();
    repoId = (await admin.readyRepo()).id;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await stack?.stop();
  });

  it('output arrives as binary frames, every byte once and in order, through a flood', async () => {
    const session = await shell();
    const v = await viewerFor(admin, session.id);
    // Numbered lines from the shell itself; the sum of what arrived must be exactly what seq prints.
    const lines = 200_000;
    await v.type(`seq 1 ${lines} | sha256sum; seq 1 ${lines}; echo done-$((6*7))\r`);
    await v.waitText('done-42', 240_000);
    expect(v.badFrames).toBe(0);
    expect(v.frames).toBeGreaterThan(0);
    // Seqs strictly increase by one: nothing lost, nothing twice.
    const sorted = [...v.seqs].sort((a, b) => a - b);
    expect(v.seqs).toEqual(sorted);
    expect(new Set(v.seqs).size).toBe(v.seqs.length);
    const clean = v.text.replaceAll('\r\n', '\n');
    const printed = Array.from({ length: lines }, (_, i) => `${i + 1}\n`).join('');
    const start = clean.indexOf('\n1\n2\n3\n') + 1;
    expect(start).toBeGreaterThan(0);
    expect(clean.slice(start, start + printed.length)).toBe(printed);
    const want = createHash('sha256').update(printed).digest('hex');
    expect(clean).toContain(want);
  });

  it('keys typed faster than they are answered arrive in order', async () => {
    const session = await shell();
    const v = await viewerFor(admin, session.id);
    const digits = Array.from({ length: 120 }, (_, i) => String(i % 10)).join('');
    // One key per event, none awaited: the cached right must not let a later key overtake.
    const answers = [...`echo k${digits}k`].map((key) => v.type(key));
    answers.push(v.type('\r'));
    const results = await Promise.all(answers);
    expect(results.every((r) => r.ok)).toBe(true);
    // The command's output carries the keys in the order they were typed.
    await v.waitText(`\rk${digits}k\r\n`);
  });

  it('a member who could type loses it at once when demoted, logged out or removed; nobody types into an ended session', async () => {
    const session = await shell();
    const dora = await join('dora@live.example', 'operator');
    const doraId = (await dora.ok<MeDetails>('GET', '/api/me')).user.id;
    const watch = await viewerFor(admin, session.id);
    const v = await viewerFor(dora, session.id);
    // The right is checked and remembered.
    expect((await v.type('echo typed-$((1+1))\r')).ok).toBe(true);
    await watch.waitText('typed-2');

    await admin.ok('PATCH', `/api/members/${doraId}`, { role: 'viewer' });
    const demoted = await v.type('echo demoted-$((2+2))\r');
    expect(!demoted.ok && demoted.error.code).toBe('FORBIDDEN');
    // Promoted again: typing works again (the refusal was not remembered either).
    await admin.ok('PATCH', `/api/members/${doraId}`, { role: 'operator' });
    expect((await v.type('echo back-$((3+3))\r')).ok).toBe(true);
    await watch.waitText('back-6');

    // Logging out ends this login's socket; its remembered right goes with it.
    const gone = new Promise<string>((res) => v.socket.once('disconnect', res));
    await dora.ok('POST', '/api/auth/logout');
    expect(await gone).toBe('io server disconnect');

    // A second login of a member who is then removed: refused, then disconnected.
    const again = new Api(stack.url);
    await again.ok('POST', '/api/auth/login', { email: 'dora@live.example', password: PASSWORD });
    const v2 = await viewerFor(again, session.id);
    expect((await v2.type('echo second-$((4+4))\r')).ok).toBe(true);
    await watch.waitText('second-8');
    const removed = new Promise<string>((res) => v2.socket.once('disconnect', res));
    await admin.ok('DELETE', `/api/members/${doraId}`);
    expect(await removed).toBe('io server disconnect');

    // The demoted key never reached the shell: the admin's own marker comes after it, it is absent.
    const mine = await viewerFor(admin, session.id);
    expect((await mine.type('echo admin-$((5+5))\r')).ok).toBe(true);
    await watch.waitText('admin-10');
    expect(watch.text).not.toContain('demoted-4');

    // An ended session takes no keys, even from a socket that typed into it a moment ago.
    await admin.ok('POST', `/api/sessions/${session.id}/stop`);
    await admin.waitState(session.id, ['COMPLETED', 'FAILED']);
    await waitFor(async () => {
      const r = await mine.type('x');
      return !r.ok && r.error.code === 'CONFLICT';
    }, 'keys to an ended session to be refused');
  });

  it('bad input gets a clear error, changes nothing, and the server stays up', async () => {
    const session = await shell();
    const v = await viewerFor(admin, session.id);
    for (const body of [{ session_id: session.id, data: '' }, { session_id: session.id }, { session_id: 42, data: 'x' }, { session_id: session.id, data: 'x'.repeat(70_000) }, null]) {
      const r = await call(v.socket, 'terminal:input', body);
      expect(!r.ok && r.error.code).toBe('BAD_REQUEST');
    }
    const unknown = await call(v.socket, 'terminal:input', { session_id: 'ses_does_not_exist', data: 'x' });
    expect(unknown.ok).toBe(false);
    const badAttach = await call(v.socket, 'session:attach', { session_id: session.id, binary: 'yes' });
    expect(!badAttach.ok && badAttach.error.code).toBe('BAD_REQUEST');
    expect((await v.type('echo still-$((7+7))\r')).ok).toBe(true);
    await v.waitText('still-14');
  });
});

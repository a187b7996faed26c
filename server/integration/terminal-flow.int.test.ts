import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOW_CONTROL, type SessionSummary } from '../../protocol';
import { Api, call, ROOT, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/** Output that did not grow over this long counts as stopped (a paused PTY sends nothing at all). */
const PAUSE_SETTLE_MS = 500;

/** Waits until the watcher's text stops growing: the runner has paused the PTY for want of acks. */
async function outputStopsGrowing(watcher: TerminalWatcher) {
  let last = -1;
  await waitFor(
    async () => {
      const now = watcher.text().length;
      const still = now === last;
      last = now;
      if (!still) await new Promise((r) => setTimeout(r, PAUSE_SETTLE_MS));
      return still;
    },
    'output to stop growing (PTY paused)',
    60_000,
  );
}

describe('terminal flow control (browser acks → server → runner pauses the PTY)', () => {
  let stack: Stack;
  let api: Api;
  let session: SessionSummary;
  let watcher: TerminalWatcher;

  beforeAll(async () => {
    stack = await startStack();
    api = new Api(stack.url);
    await api.setupAdmin();
    const repo = await api.readyRepo();
    session = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    await api.waitState(session.id, ['RUNNING']);
    watcher = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await watcher.attach();
  });
  afterAll(async () => stack?.stop());

  it('a viewer that does not ack holds the PTY near the high watermark; acks release it', async () => {
    watcher.autoAck = false;
    const before = watcher.text().length;
    await watcher.type('yes\r');
    await watcher.waitText(/(y\r\n){1000}/, 'yes output');
    // Wait on conditions, not a clock (a loaded machine is slow): output reaches the watermark,
    // then stops growing once the runner has paused the PTY.
    await waitFor(() => watcher.text().length - before > FLOW_CONTROL.HIGH_WATERMARK_CHARS / 2, 'output up to the watermark', 60_000);
    await outputStopsGrowing(watcher);
    const held = watcher.text().length - before;
    expect(held).toBeGreaterThan(FLOW_CONTROL.HIGH_WATERMARK_CHARS / 2);
    expect(held).toBeLessThan(FLOW_CONTROL.HIGH_WATERMARK_CHARS * 4);
    watcher.autoAck = true;
    watcher.socket.emit('terminal:ack', { session_id: session.id, seq: watcher.events.at(-1)!.seq });
    await waitFor(() => watcher.text().length - before > held * 2, 'output to resume after the ack');
  });

  it('yes then Ctrl-C returns the prompt', async () => {
    await watcher.type('\x03');
    await watcher.type('echo after-yes-$((3+4))\r');
    await watcher.waitText('after-yes-7');
  });

  it('a viewer who attaches while the PTY is paused for a viewer that stopped acking gets live output', async () => {
    watcher.autoAck = false;
    const before = watcher.text().length;
    await watcher.type('yes\r');
    // Past the high watermark with nothing acked, the runner has paused; once the output stops
    // growing, everything it sent before the pause has arrived (nothing in flight to ack later).
    await waitFor(() => watcher.text().length - before > FLOW_CONTROL.HIGH_WATERMARK_CHARS, 'output past the watermark', 60_000);
    await outputStopsGrowing(watcher);
    // A second tab opens the terminal; the first (frozen, hidden) still acks nothing.
    const late = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    // It acks as the page does: output it has parsed, never a state change or a usage tick.
    late.autoAck = false;
    late.socket.on('session:events', (b) => {
      const chunks = b.events.filter((e) => e.type === 'TERMINAL_CHUNK');
      if (b.session_id === session.id && !b.replay && chunks.length) late.socket.emit('terminal:ack', { session_id: session.id, seq: chunks.at(-1)!.seq });
    });
    await late.attach(watcher.events.at(-1)!.seq);
    const live = () => late.events.filter((e) => e.seq > late.replayedThrough && e.type === 'TERMINAL_CHUNK').reduce((n, e) => n + (e.data?.length ?? 0), 0);
    await waitFor(() => live() > FLOW_CONTROL.HIGH_WATERMARK_CHARS, 'live output for the second viewer', 60_000);
    await late.type('\x03');
    await late.type('echo after-late-$((4+5))\r');
    await late.waitText('after-late-9');
    late.socket.close();
    watcher.autoAck = true;
    watcher.socket.emit('terminal:ack', { session_id: session.id, seq: watcher.events.at(-1)!.seq });
  }, 180_000);

  it('the last viewer leaving while the PTY is paused for it lets the PTY run on, with nobody watching', async () => {
    watcher.autoAck = false;
    const before = watcher.text().length;
    await watcher.type('yes\r');
    await waitFor(() => watcher.text().length - before > FLOW_CONTROL.HIGH_WATERMARK_CHARS / 2, 'output up to the watermark', 60_000);
    await outputStopsGrowing(watcher);
    const pausedAt = watcher.events.at(-1)!.seq;
    const detached = await call(watcher.socket, 'session:detach', { session_id: session.id });
    expect(detached.ok).toBe(true);
    // Nobody holds it back now: the PTY runs on and its output is stored (seen through the API,
    // not a viewer: attaching would ack what it paints and release the PTY by itself).
    const storedSeq = async () => (await api.ok<SessionSummary>('GET', `/api/sessions/${session.id}`)).last_seq;
    await waitFor(async () => (await storedSeq()) > pausedAt + 10, 'the PTY to run on without viewers', 60_000);
    // Keys need no attach: stop yes, then watch again from the stored end.
    await watcher.type('\x03');
    watcher.autoAck = true;
    await watcher.attach(await storedSeq());
    await watcher.type('echo after-detach-$((5+6))\r');
    await watcher.waitText('after-detach-11');
  }, 180_000);

  it('a 50 MB cat arrives complete (checksum), in order, without duplicates', async () => {
    // Not in the control plane's DATA_DIR nor /tmp: a session sees neither (its sandbox has a
    // private /tmp; README, "Threat model"). test-results/ is ignored by git.
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'test-results', 'av-big-'));
    chmodSync(dir, 0o755);
    const file = join(dir, 'big.txt');
    const line = (i: number) => `${String(i).padStart(9, '0')} ${'the quick brown fox jumps over the lazy dog '.repeat(2)}\n`;
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < 50 * 1024 * 1024; i++) {
      const l = line(i);
      lines.push(l);
      size += l.length;
    }
    const content = lines.join('');
    writeFileSync(file, content);
    const expected = createHash('sha256').update(content.replaceAll('\n', '\r\n')).digest('hex');

    const chunks: string[] = [];
    let done = false;
    watcher.socket.on('session:events', (b) => {
      for (const e of b.events) if (e.type === 'TERMINAL_CHUNK' && e.data) chunks.push(e.data);
      if (b.events.some((e) => e.data?.includes('\x03'))) done = true;
    });
    const from = watcher.events.length;
    await watcher.type(`printf '\\002'; cat ${file}; printf '\\003'\r`);
    await waitFor(() => done, '50 MB through the terminal', 240_000);
    const all = chunks.join('');
    const start = all.indexOf('\x02');
    const end = all.indexOf('\x03', start);
    const got = all.slice(start + 1, end);
    expect(got.length).toBe(content.length + lines.length);
    expect(createHash('sha256').update(got).digest('hex')).toBe(expected);
    const seqs = watcher.events.slice(from).map((e) => e.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);
});

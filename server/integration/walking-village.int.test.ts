import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionSummary } from '../../protocol';
import { Api, startStack, TerminalWatcher, uiSocket, waitFor, type Stack } from './harness';

/** Live (not zombie) host processes whose command line is exactly `cmdline` (NUL-separated). */
function hostPidsOf(cmdline: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8') === cmdline && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${d}/stat`, 'utf8'));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The walking village end to end below the browser: REST + /ui socket + attached runner + PTY + git. */
describe('walking village (real server, real runner, real PTY, real git)', () => {
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    // A marker in the server's environment: the session's shell must not see it.
    stack = await startStack({ env: { AV_SECRET_MARKER: 'do-not-leak-4711' } });
    api = new Api(stack.url);
  });
  afterAll(async () => stack?.stop());

  it('asks for setup first, then refuses everything without login', async () => {
    expect((await api.ok<{ needed: boolean }>('GET', '/api/setup')).needed).toBe(true);
    const anon = await api.request('GET', '/api/world');
    expect(anon.status).toBe(401);
    await api.setupAdmin();
    expect((await api.ok<{ needed: boolean }>('GET', '/api/setup')).needed).toBe(false);
    const again = await new Api(stack.url).request('POST', '/api/setup', { email: 'b@example.com', password: 'another password' });
    expect(again.status).toBe(409);
  });

  it('registers the demo repository as a building with its directories as rooms', async () => {
    const repo = await api.readyRepo();
    expect(repo.name).toBe('lamplighter');
    const paths = repo.tree!.dirs.map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['', 'src', 'src/core', 'src/api/handlers', 'tests/core', 'docs/guide']));
    const world = await api.world();
    expect(world.runners.some((r) => r.online && r.providers.includes('shell'))).toBe(true);
  });

  let session: SessionSummary;
  let watcher: TerminalWatcher;

  it('spawns a shell session in a room, in its own git worktree, with a clean environment', async () => {
    const repo = await api.readyRepo();
    session = await api.ok<SessionSummary>('POST', '/api/sessions', { repo_id: repo.id, room_path: 'src/core', provider: 'shell' });
    expect(session.room_path).toBe('src/core');
    await api.waitState(session.id, ['RUNNING']);

    const socket = await uiSocket(stack.url, api.cookie);
    watcher = new TerminalWatcher(socket, session.id);
    await watcher.attach();
    await watcher.type('echo hello-$((40+2)); pwd\r');
    await watcher.waitText('hello-42');
    const worktree = join(stack.dataDir, 'runner', 'worktrees', session.id);
    await watcher.waitText(`${worktree}/src/core`);
    expect(existsSync(join(worktree, 'src/core/lamp.js'))).toBe(true);
    // The worktree belongs to the runner's user (not this test's): git needs to be told it is safe.
    const branch = execFileSync('git', ['-c', `safe.directory=${worktree}`, '-C', worktree, 'rev-parse', '--abbrev-ref', 'HEAD']).toString().trim();
    expect(branch).toBe(`agent/${session.id}`);

    await watcher.type('env | sort; echo env-done-$((1+1))\r');
    await watcher.waitText('env-done-2');
    const text = watcher.text();
    expect(text).toContain('AGENT_VILLAGE_SESSION_ID=');
    expect(text).not.toContain('do-not-leak-4711');
    expect(text).not.toContain('DATABASE_URL');
    expect(text).not.toContain('AGENT_RUNNER_TOKEN');
  });

  it('replays the same screen to a second viewer, then streams live to both with no gap or duplicate', async () => {
    const second = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await second.attach(0);
    expect(second.text()).toContain('hello-42');
    await watcher.type('echo both-$((2*3))\r');
    await second.waitText('both-6');
    await watcher.waitText('both-6');
    for (const w of [watcher, second]) {
      const seqs = w.events.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs[0]).toBe(1);
      expect(seqs.at(-1)! - seqs[0]! + 1).toBe(seqs.length); // contiguous
    }
    // A reattach after the last seen seq receives only what is new.
    const third = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    const last = second.events.at(-1)!.seq;
    await third.attach(last);
    expect(third.events.every((e) => e.seq > last)).toBe(true);
    second.socket.close();
    third.socket.close();
  });

  it('forwards resize, and full-screen programs (vim, top) and colours work', async () => {
    const resized = await watcher.socket.timeout(10_000).emitWithAck('terminal:resize', { session_id: session.id, cols: 100, rows: 30 });
    expect(resized.ok).toBe(true);
    await watcher.type('stty size\r');
    await watcher.waitText('30 100');

    await watcher.type("printf '\\033[31mred-%s\\033[0m\\n' ok\r");
    await watcher.waitText('\x1b[31mred-ok\x1b[0m');

    await watcher.type('vi -u NONE -N notes.txt\r');
    await watcher.waitText('\x1b[?1049h', 'vim on the alternate screen');
    await watcher.type('ihello from vim');
    await watcher.waitText('hello from vim');
    await watcher.type('\x1b');
    // vim reads a lone ESC only after its escape-sequence timeout, as with a person typing.
    await new Promise((r) => setTimeout(r, 300));
    await watcher.type(':wq\r');
    await watcher.waitText('\x1b[?1049l', 'vim to leave the alternate screen');
    await watcher.type('cat notes.txt; echo vim-done-$((1+8))\r');
    await watcher.waitText(/hello from vim\r\nvim-done-9/).catch((e) => {
      throw new Error(`${e.message}; screen tail: ${JSON.stringify(watcher.text().slice(-800))}`);
    });

    const before = watcher.text().length;
    await watcher.type('top\r');
    await waitFor(() => /load average/.test(watcher.text().slice(before)), 'top to draw');
    const drawn = watcher.text().length;
    await watcher.type('q');
    // Back at the shell: the prompt (it ends in "# " or "$ ") is the last thing on the screen.
    await waitFor(() => /[#$] $/.test(watcher.text().slice(drawn)), 'top to quit back to the prompt');
    await watcher.type('echo top-done-$((2+8))\r');
    await watcher.waitText('top-done-10');
  });

  it('stops the session: process group ended, worktree removed, session completed', async () => {
    // The session has its own PID namespace, so the pid it prints means nothing out here: the job
    // is found by its command line in the host's /proc instead.
    await watcher.type('sleep 1017 & echo bg-started-$((1+1))\r');
    await watcher.waitText('bg-started-2');
    await waitFor(() => hostPidsOf('sleep\u00001017\u0000').length > 0, 'the background job in the host /proc');
    await api.ok('POST', `/api/sessions/${session.id}/stop`);
    const ended = await api.waitState(session.id, ['COMPLETED', 'FAILED']);
    expect(ended.state).toBe('COMPLETED');
    const worktree = join(stack.dataDir, 'runner', 'worktrees', session.id);
    await waitFor(() => !existsSync(worktree), 'worktree removal');
    await waitFor(() => hostPidsOf('sleep\u00001017\u0000').length === 0, 'the background job to end with the session');
    const world = await api.world();
    expect(world.sessions.find((s) => s.id === session.id)?.state).toBe('COMPLETED');
    watcher.socket.close();
  });

  it('adds a second repository by local path and scans it into a second building', async () => {
    const dir = join(stack.dataDir, 'second-repo');
    execFileSync('mkdir', ['-p', join(dir, 'lib/util')]);
    execFileSync('sh', ['-c', `cd ${dir} && git init -q -b trunk && echo x > lib/util/a.txt && echo y > README && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm init`]);
    await api.ok('POST', '/api/repos', { source: dir, name: 'second' });
    const repo = await waitFor(async () => (await api.world()).repos.find((r) => r.name === 'second' && r.status === 'ready'), 'second repo');
    expect(repo.default_branch).toBe('trunk');
    expect(repo.tree!.dirs.map((d) => d.path)).toEqual(['', 'lib', 'lib/util']);
    const dup = await api.request('POST', '/api/repos', { source: dir });
    expect(dup.status).toBe(409);
    const bad = await api.request('POST', '/api/repos', { source: '/nonexistent/nowhere' });
    expect(bad.status).toBe(200); // accepted, then the scan reports the error in words
    const failed = await waitFor(async () => (await api.world()).repos.find((r) => r.source === '/nonexistent/nowhere' && r.status === 'error'), 'scan error');
    expect(failed.error).toMatch(/clone|not|exist/i);
  });
});

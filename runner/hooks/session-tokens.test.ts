import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { SessionTokens, TOKEN_REFUSALS } from './session-tokens';

const A = { org_id: 'org_a', repo_id: 'repo_a', session_id: 'sess_aaaaaaaa' };

describe('SessionTokens', () => {
  it('checks signature, scope, expiry and liveness', () => {
    let now = 1_000_000;
    const tokens = new SessionTokens(() => now);
    const t = tokens.mint(A, 60_000);
    expect(tokens.check(t, A.session_id)).toEqual({ ok: true, scope: A, expiresAt: 1_060_000 });
    expect(tokens.check(t, 'sess_bbbbbbbb')).toEqual({ ok: false, reason: 'wrong_session' });
    // Another runner process (another key) did not issue it; a tampered claim breaks the signature.
    expect(new SessionTokens(() => now).check(t, A.session_id)).toEqual({ ok: false, reason: 'bad_signature' });
    const [body, mac] = t.slice('avs1_'.length).split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), s: 'sess_bbbbbbbb' })).toString('base64url');
    expect(tokens.check(`avs1_${forged}.${mac}`, 'sess_bbbbbbbb')).toEqual({ ok: false, reason: 'bad_signature' });
    for (const junk of [undefined, '', 'avr_x', 'avs1_', 'avs1_a.b.c', `avs1_${'x'.repeat(2000)}`]) {
      expect(tokens.check(junk, A.session_id).ok).toBe(false);
    }
    now = 1_060_000;
    expect(tokens.check(t, A.session_id)).toEqual({ ok: false, reason: 'expired' });
    now = 1_000_000;
    // A re-issued token retires the old one; ending the session retires both.
    const t2 = tokens.mint(A, 60_000);
    expect(tokens.check(t, A.session_id)).toEqual({ ok: false, reason: 'session_ended' });
    expect(tokens.check(t2, A.session_id).ok).toBe(true);
    tokens.end(A.session_id);
    expect(tokens.check(t2, A.session_id)).toEqual({ ok: false, reason: 'session_ended' });
    expect(tokens.liveCount).toBe(0);
  });
});

/**
 * A tiny client run *inside* a session's shell: POSTs a hook call to a URL with a token (both
 * from files) and prints the status, as a stolen-token attempt would.
 */
const PROBE = `
import fs from 'node:fs';
import http from 'node:http';
const [url, tokenFile, label] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile, 'utf8').trim();
const body = JSON.stringify({ provider: 'shell', event: 'probe', payload: {} });
const req = http.request(url, { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' } }, (res) => {
  const chunks = [];
  res.on('data', (c) => chunks.push(c));
  res.on('end', () => console.log(label + '=' + res.statusCode + ' ' + Buffer.concat(chunks).toString()));
});
req.on('error', (e) => console.log(label + '=ERR ' + e.message));
req.end(body);
`;

describe('session tokens in real sessions (real PTYs, real hook server)', () => {
  let h: SessionHarness;
  afterEach(() => h.close());

  async function startShell() {
    const cmd = createCommand({ repo_source: h.source });
    expect(h.manager.create(cmd).ok).toBe(true);
    await waitFor(() => /[#$] /.test(outputOf(h.events, cmd.session_id)), 'prompt', 20_000);
    const session = h.manager.get(cmd.session_id)!;
    const worktree = session.worktree!.path;
    fs.writeFileSync(path.join(worktree, '.probe.mjs'), PROBE);
    return { sid: cmd.session_id, worktree };
  }

  async function probe(sid: string, url: string, tokenFile: string, label: string): Promise<string> {
    h.manager.input({ session_id: sid, data: `${JSON.stringify(process.execPath)} .probe.mjs ${url} ${tokenFile} ${label}`, mode: 'line' });
    const m = await waitFor(() => new RegExp(`${label}=(\\d+|ERR)([^\\r\\n]*)`).exec(outputOf(h.events, sid).replace(/\.mjs \S+ \S+ \w+/g, '')), label, 15_000);
    return `${m[1]}${m[2]}`;
  }

  it("a session's token works for it, is refused for another session, and after its session ended", async () => {
    h = await makeSessionHarness('session-tokens', { hooks: true });
    const a = await startShell();
    const b = await startShell();
    const urlOf = (sid: string) => `${h.hooks!.url}/${sid}`;
    // Session A's token, as a process inside A finds it (its guard config in its home).
    h.manager.input({ session_id: a.sid, data: `${JSON.stringify(process.execPath)} -e "console.log(JSON.parse(require('fs').readFileSync(process.env.HOME+'/.agent-village/guard.json','utf8')).token)" > token-a.txt`, mode: 'line' });
    const tokenA = await waitFor(() => {
      const t = fs.existsSync(path.join(a.worktree, 'token-a.txt')) && fs.readFileSync(path.join(a.worktree, 'token-a.txt'), 'utf8').trim();
      return t && t.startsWith('avs1_') ? t : null;
    }, "A's token");
    // The scope is in the token: org, repository, session.
    const check = h.hooks!.checkToken(tokenA, a.sid);
    expect(check).toMatchObject({ ok: true, scope: { org_id: 'org_test', repo_id: 'repo_sample01', session_id: a.sid } });

    expect(await probe(a.sid, urlOf(a.sid), 'token-a.txt', 'OWN')).toMatch(/^200/);
    expect(await probe(a.sid, urlOf(b.sid), 'token-a.txt', 'CROSS')).toBe(`403 ${JSON.stringify({ error: TOKEN_REFUSALS.wrong_session.message })}`);

    // A ends; B (still running) holds A's stolen token.
    h.manager.stop({ session_id: a.sid });
    await waitFor(() => eventsOf(h.events, a.sid, 'SESSION_STATE_CHANGED').some((e) => e.to === 'COMPLETED' || e.to === 'FAILED'), 'A to end', 20_000);
    fs.writeFileSync(path.join(b.worktree, 'stolen.txt'), tokenA);
    expect(await probe(b.sid, urlOf(a.sid), 'stolen.txt', 'AFTER')).toBe(`401 ${JSON.stringify({ error: TOKEN_REFUSALS.session_ended.message })}`);
    expect(await probe(b.sid, urlOf(b.sid), 'stolen.txt', 'ATB')).toBe(`403 ${JSON.stringify({ error: TOKEN_REFUSALS.wrong_session.message })}`);
    expect(h.hooks!.checkToken(tokenA, a.sid)).toEqual({ ok: false, reason: 'session_ended' });
  });
});

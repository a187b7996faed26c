import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { keptProposalCount, liveStagedDirs } from './kept-proposals';

/** av-dta is on PATH inside a real session (real PTY, real git worktree) and edits that worktree. */
vi.setConfig({ testTimeout: 180_000 });

describe('av-dta in a session', () => {
  let h: SessionHarness;
  afterEach(() => h.close());

  it('an agent runs av-dta through the runner against its own worktree: table on the terminal, exit 0, the file changed, dta_* events in its stream', async () => {
    h = await makeSessionHarness('dta-session', { hooks: true, repoFiles: { 'docs/links.md': '[home](http://old.example.com/home)\n' } });
    const cmd = createCommand({ repo_source: h.source });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    await waitFor(() => eventsOf(h.events, sid, 'SESSION_STATE_CHANGED').some((e) => e.to === 'RUNNING'), 'RUNNING');
    await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
    const worktree = h.manager.get(sid)!.worktree!.path;
    const inv = JSON.stringify({ tool: 'link_updater', version: '1.0', mode: 'apply', target: { repo_path: '.' }, params: { from_hosts: ['http://old.example.com'], to_host: 'https://new.example.com' } });
    const file = path.join(worktree, 'docs/links.md');
    // Apply asks first: the dry-run's patch is an approval card; Deny applies nothing.
    h.manager.input({ session_id: sid, data: `echo '${inv}' | av-dta run - > /dev/null; echo DENY-EXIT-$?`, mode: 'line' });
    const first = await waitFor(() => eventsOf(h.events, sid, 'APPROVAL_REQUESTED')[0], 'the DTA approval card', 120_000);
    expect(first).toMatchObject({ category: 'dta', context: { source: 'dta', changed_files: 1 } });
    expect(first.context.diff_stat).toContain('+[home](https://new.example.com/home)');
    expect(h.manager.approve({ session_id: sid, approval_id: first.approval_id, command_hash: first.context.command_hash, decision: 'deny', decided_by: 'ann' }).ok).toBe(true);
    const denied = await waitFor(() => /DENY-EXIT-(\d+)/.exec(outputOf(h.events, sid).replace('echo DENY-EXIT-$?', '')), 'av-dta after deny', 120_000);
    expect(denied[1]).toBe('1');
    expect(fs.readFileSync(file, 'utf8')).toBe('[home](http://old.example.com/home)\n');
    // A denied proposal's verifier and staged contents are not kept for an apply that will not come.
    expect(keptProposalCount()).toBe(0);
    expect(liveStagedDirs().size).toBe(0);

    h.manager.input({ session_id: sid, data: `echo '${inv}' | av-dta run - --table; echo DTA-EXIT-$?`, mode: 'line' });
    const second = await waitFor(() => eventsOf(h.events, sid, 'APPROVAL_REQUESTED')[1], 'the second DTA approval card', 120_000);
    expect(h.manager.approve({ session_id: sid, approval_id: second.approval_id, command_hash: second.context.command_hash, decision: 'allow', decided_by: 'ann' }).ok).toBe(true);
    const m = await waitFor(() => /DTA-EXIT-(\d+)/.exec(outputOf(h.events, sid).replace('echo DTA-EXIT-$?', '')), 'av-dta exit', 120_000);
    expect(outputOf(h.events, sid)).toMatch(/verifier: passed/);
    expect(m[1]).toBe('0');
    expect(fs.readFileSync(path.join(worktree, 'docs/links.md'), 'utf8')).toBe('[home](https://new.example.com/home)\n');
    // The runner ran it (through the hook channel) and put its events into the session's stream.
    // The apply after Allow: discovered again, bound to the approved patch, applied, verified.
    expect(eventsOf(h.events, sid, 'DTA_EVENT').map((e) => e.event.type).slice(-4)).toEqual(['dta_started', 'dta_proposed', 'dta_applied', 'dta_verified']);

    // A target outside the worktree is refused.
    const outside = JSON.stringify({ tool: 'link_updater', version: '1.0', mode: 'dry-run', target: { repo_path: '/tmp' }, params: { from_hosts: ['http://old.example.com'], to_host: 'https://new.example.com' } });
    h.manager.input({ session_id: sid, data: `echo '${outside}' | av-dta run -; echo OUT-EXIT-$?`, mode: 'line' });
    const o = await waitFor(() => /OUT-EXIT-(\d+)/.exec(outputOf(h.events, sid).replace('echo OUT-EXIT-$?', '')), 'av-dta refusal', 120_000);
    expect(o[1]).not.toBe('0');
    expect(outputOf(h.events, sid)).toMatch(/outside this session's worktree/);
  });
});

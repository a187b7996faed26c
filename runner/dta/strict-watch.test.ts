import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunnerEventBody } from '../../protocol';
import { silentLogger } from '../log';
import { StrictWatch } from './strict-watch';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';

/** Strict tools' second line, in a real session (real PTY, real git worktree, real watcher). */
vi.setConfig({ testTimeout: 180_000 });

const OLD = '<a href="http://old.example.com/home">home</a>\n';
const NEW = '<a href="https://new.example.com/home">home</a>\n';

describe('strict tools: the worktree watcher', () => {
  let h: SessionHarness;
  afterEach(() => h.close());

  it('reverts a shell sed of links (past the hooks) with a POLICY_BLOCKED naming the DTA, keeps free edits, and accepts av-dta’s own apply', async () => {
    h = await makeSessionHarness('strict-watch', { hooks: true, repoFiles: { 'site/index.html': OLD, 'site/about.html': '<p>about us</p>\n', 'site/links.html': OLD } });
    const cmd = createCommand({ repo_source: h.source, policy: { strict_tools: true } });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    await waitFor(() => eventsOf(h.events, sid, 'SESSION_STATE_CHANGED').some((e) => e.to === 'RUNNING'), 'RUNNING');
    await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
    const worktree = h.manager.get(sid)!.worktree!.path;
    const index = path.join(worktree, 'site/index.html');
    const about = path.join(worktree, 'site/about.html');
    const links = path.join(worktree, 'site/links.html');
    const reverted = () => eventsOf(h.events, sid, 'POLICY_BLOCKED').filter((e) => e.outcome === 'reverted');

    // A link move by hand through the shell: the hooks never see it; the watcher puts it back.
    h.manager.input({ session_id: sid, data: `sed -i 's#http://old.example.com#https://new.example.com#' site/index.html; echo SED-DONE`, mode: 'line' });
    const blocked = await waitFor(() => reverted()[0], 'the strict-tools revert', 60_000);
    expect(blocked).toMatchObject({ rule: 'strict_tools', dta_tool: 'link_updater', path: 'site/index.html', detail: expect.stringMatching(/link_updater DTA/) });
    await waitFor(() => fs.readFileSync(index, 'utf8') === OLD, 'the file put back');

    // A free edit (prose, not links) and a mixed edit (text and a link together) stay. Reviews run
    // in order, so the next revert (in another file) proves both were reviewed and kept.
    h.manager.input({ session_id: sid, data: `sed -i 's#about us#about the village#' site/about.html; sed -i 's#>home<#>start<#;s#http://old.example.com#http://old2.example.com#' site/index.html; echo FREE-DONE`, mode: 'line' });
    await waitFor(() => outputOf(h.events, sid).includes('FREE-DONE\r'), 'the free edits');
    h.manager.input({ session_id: sid, data: `sed -i 's#http://old.example.com#https://new.example.com#' site/links.html; echo SED2-DONE`, mode: 'line' });
    await waitFor(() => reverted().length === 2, 'the second revert', 60_000);
    expect(reverted()[1]).toMatchObject({ path: 'site/links.html', dta_tool: 'link_updater' });
    expect(fs.readFileSync(links, 'utf8')).toBe(OLD);
    expect(fs.readFileSync(about, 'utf8')).toBe('<p>about the village</p>\n');
    expect(fs.readFileSync(index, 'utf8')).toBe('<a href="http://old2.example.com/home">start</a>\n');

    // The DTA itself (av-dta through the runner, on a clean tree) makes that change: it is not reverted.
    h.manager.input({ session_id: sid, data: `git -c user.name=a -c user.email=a@example.com commit -qam free; echo COMMIT-DONE`, mode: 'line' });
    await waitFor(() => outputOf(h.events, sid).includes('COMMIT-DONE\r'), 'the commit');
    const inv = JSON.stringify({ tool: 'link_updater', version: '1.0', mode: 'apply', target: { repo_path: '.' }, params: { from_hosts: ['http://old.example.com'], to_host: 'https://new.example.com' } });
    h.manager.input({ session_id: sid, data: `echo '${inv}' | av-dta run - > /dev/null; echo DTA-EXIT-$?`, mode: 'line' });
    const card = await waitFor(() => eventsOf(h.events, sid, 'APPROVAL_REQUESTED')[0], 'the DTA approval card', 120_000);
    expect(h.manager.approve({ session_id: sid, approval_id: card.approval_id, command_hash: card.context.command_hash, decision: 'allow', decided_by: 'ann' }).ok).toBe(true);
    const m = await waitFor(() => /DTA-EXIT-(\d+)/.exec(outputOf(h.events, sid).replace('echo DTA-EXIT-$?', '')), 'av-dta exit', 120_000);
    expect(m[1]).toBe('0');
    // One more hand edit: once it is reverted, the DTA's own writes were reviewed before it.
    h.manager.input({ session_id: sid, data: `sed -i 's#old2.example.com#old3.example.com#' site/index.html; echo SED3-DONE`, mode: 'line' });
    await waitFor(() => reverted().length === 3, 'the third revert', 60_000);
    expect(fs.readFileSync(links, 'utf8')).toBe(NEW);
    expect(reverted().map((e) => e.path)).toEqual(['site/index.html', 'site/links.html', 'site/index.html']);
  });
});

describe('strict tools: the session’s own av-dta run', () => {
  let dir = '';
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A real git repo with `rel` committed as OLD, and a StrictWatch over it collecting its events. */
  function watchedRepo(rel: string) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strict-dta-'));
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, OLD);
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'site');
    const events: RunnerEventBody[] = [];
    const watch = new StrictWatch({ worktree: dir, baseSha: git('rev-parse', 'HEAD').trim(), emit: (e) => events.push(e), log: silentLogger });
    return { file, events, watch };
  }

  // dta-strict.spec failed in CI: the agent ran av-dta from its room (site/), the run reported
  // site/index.html (relative to the top level), the reviewer took it as site/site/index.html, and
  // the watcher's batch, arriving after the (fast) run, reverted the DTA's own apply as a hand edit.
  it('accepts the files of a run started from a room below the top level, even when the watcher reports them after the run', async () => {
    const { file: index, events, watch } = watchedRepo('site/index.html');

    const out = await watch.runningDta(path.join(dir, 'site'), async () => {
      fs.writeFileSync(index, NEW);
      return { files: ['site/index.html'] };
    });
    expect(out.files).toEqual(['site/index.html']);
    // The watcher's batch for that write, reviewed after the run ended.
    await watch.review([{ path: 'site/index.html', exists: true }]);
    expect(events).toEqual([]);
    expect(fs.readFileSync(index, 'utf8')).toBe(NEW);

    // A later hand edit of the same kind is still reverted, to the DTA's text.
    fs.writeFileSync(index, NEW.replace('https://new.example.com', 'https://newer.example.com'));
    await watch.review([{ path: 'site/index.html', exists: true }]);
    expect(events).toEqual([expect.objectContaining({ type: 'POLICY_BLOCKED', rule: 'strict_tools', outcome: 'reverted', path: 'site/index.html' })]);
    expect(fs.readFileSync(index, 'utf8')).toBe(NEW);
  });

  it('never puts back the base over a DTA apply that lands while a hand edit is being reviewed', async () => {
    const { file: index, events, watch } = watchedRepo('index.html');

    // A hand edit of a link; its review starts and waits for the base text from git…
    fs.writeFileSync(index, OLD.replace('http://old.example.com', 'http://elsewhere.example.com'));
    const reviewing = watch.review([{ path: 'index.html', exists: true }]);
    // …while the session's own av-dta run writes the verified change over it.
    await watch.runningDta(dir, async () => {
      fs.writeFileSync(index, NEW);
      return { files: ['index.html'] };
    });
    await reviewing;
    expect(fs.readFileSync(index, 'utf8')).toBe(NEW);
    expect(events).toEqual([]);
  });
});

import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEST_EVENT_PATCH_PREVIEW_CHARS, QuestUpdatedSchema, type QuestSummary, type QuestUpdated } from '../../protocol';
import { makeRepo, SITE_FILES } from '../../runner/dta/testing/fixture-repos';
import { Api, startStack, uiSocket, waitFor, type Stack, type UiClient } from './harness';

/**
 * The quest board and the village do not poll: every state change of a quest and its steps is
 * pushed on /ui as `quest:updated`. A real link-move quest runs on the real attached runner with
 * real git; a browser-like /ui socket must see each step go running → succeeded (and the gate wait)
 * in order, with the quest's own state following.
 */
describe('quest:updated on /ui', () => {
  let stack: Stack;
  let api: Api;
  let socket: UiClient;
  let repoId: string;
  let source: string;
  const pushed: QuestUpdated[] = [];

  /** Each step's states in the order the socket saw them, repeats folded. */
  const transitions = (questId: string) => {
    const out: Record<string, string[]> = {};
    for (const q of pushed.filter((x) => x.id === questId)) {
      for (const s of q.steps) {
        const seen = (out[s.step_id] ??= []);
        if (seen.at(-1) !== s.state) seen.push(s.state);
      }
    }
    return out;
  };
  const waitPushed = (questId: string, ok: (q: QuestUpdated) => boolean, what: string) =>
    waitFor(() => pushed.find((q) => q.id === questId && ok(q)) ?? null, what, 180_000);

  beforeAll(async () => {
    stack = await startStack({ env: { AGENT_VILLAGE_DEMO_REPO: '0' } });
    api = new Api(stack.url);
    await api.setupAdmin();
    source = makeRepo(SITE_FILES, 'quest-live');
    await api.ok('POST', '/api/repos', { source, name: 'quest-live-site' });
    repoId = (await api.readyRepo()).id;
    socket = await uiSocket(stack.url, api.cookie);
    // Validated on arrival like the browser does: a malformed push would fail here.
    socket.on('quest:updated', (q) => pushed.push(QuestUpdatedSchema.parse(q)));
  }, 120_000);
  afterAll(async () => {
    socket?.close();
    await stack?.stop();
    if (source) fs.rmSync(source, { recursive: true, force: true });
  });

  it('pushes every step transition of a real run: dry-run, gate, apply, verify', async () => {
    const q = await api.ok<QuestSummary>('POST', '/api/quests', { repo_id: repoId, goal: 'Move every link from old.example.com to new.example.com' });
    await waitPushed(q.id, (x) => x.state === 'planned', 'the new quest pushed');

    await api.ok('POST', `/api/quests/${q.id}/run`);
    const gated = await waitPushed(q.id, (x) => x.state === 'waiting_for_approval' || x.state === 'failed', 'the gate pushed');
    expect(gated.state).toBe('waiting_for_approval');
    expect(gated.steps.find((s) => s.step_id === 'gate')!.state).toBe('waiting_for_approval');
    // The push carries what the gate card shows (files, a patch preview), bounded in size.
    const proposal = gated.steps.find((s) => s.step_id === 'dry_run')!.proposal!;
    expect(proposal.files).toContain('site/index.html');
    expect(proposal.patch.length).toBeGreaterThan(0);
    expect(proposal.patch.length).toBeLessThanOrEqual(QUEST_EVENT_PATCH_PREVIEW_CHARS);

    await api.ok('POST', `/api/quests/${q.id}/steps/gate/decide`, { decision: 'allow' });
    const done = await waitPushed(q.id, (x) => x.state === 'succeeded' || x.state === 'failed', 'the end pushed');
    expect(done.state).toBe('succeeded');
    expect(transitions(q.id)).toEqual({
      dry_run: ['pending', 'running', 'succeeded'],
      gate: ['pending', 'waiting_for_approval', 'succeeded'],
      apply: ['pending', 'running', 'succeeded'],
      verify: ['pending', 'running', 'succeeded'],
    });
    const quests = pushed.filter((x) => x.id === q.id).map((x) => x.state).filter((st, i, all) => st !== all[i - 1]);
    expect(quests).toEqual(['planned', 'running', 'waiting_for_approval', 'running', 'succeeded']);
    // Receipts travel as hashes (the patch itself is in the download), and match REST.
    const rest = await api.ok<QuestSummary>('GET', `/api/quests/${q.id}`);
    const apply = done.steps.find((s) => s.step_id === 'apply')!;
    expect(apply.receipt).not.toHaveProperty('patch');
    expect(apply.receipt!.after_hash).toBe(rest.steps.find((s) => s.step_id === 'apply')!.receipt!.after_hash);
    expect(apply.result!.output_hash).toBe(apply.receipt!.after_hash);

    // A replay's answer is pushed too.
    await api.ok('POST', `/api/quests/${q.id}/steps/apply/replay`);
    const replayed = await waitPushed(q.id, (x) => x.steps.find((s) => s.step_id === 'apply')!.replay !== null, 'the replay pushed');
    expect(replayed.steps.find((s) => s.step_id === 'apply')!.replay).toMatchObject({ verified: true });
  }, 400_000);
});

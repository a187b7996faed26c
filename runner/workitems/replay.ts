import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ReceiptSchema, type Receipt, type ReplayResult } from '../../protocol';
import { git } from '../workspace/git';
import { patchHash } from './receipt';
import { runSkill, stepEnv, type SkillContext } from './skills';
import { stateHash } from './state';

/**
 * Replays a receipt on a fresh detached worktree at its before-commit: a deterministic step is
 * re-run and an agent step's patch re-applied (the receipt says which); verified when the state's
 * BLAKE3 hash equals the receipt's after_hash. The repository must have the before-commit.
 */
export async function replayReceipt(raw: unknown, repo: string, opts: Partial<Omit<SkillContext, 'root' | 'deadline' | 'blueprint'>> = {}): Promise<ReplayResult> {
  const parsed = ReceiptSchema.safeParse(raw);
  if (!parsed.success) return { verified: false, replay: 'rerun', expected_hash: '', actual_hash: null, detail: `not a receipt: ${parsed.error.issues[0]?.message}` };
  const r: Receipt = parsed.data;
  const base = { replay: r.replay, expected_hash: r.after_hash };
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'av-replay-')));
  const wt = path.join(dir, 'tree');
  try {
    await git(['worktree', 'add', '-q', '--detach', wt, r.before_commit], { cwd: repo, what: 'worktree add' });
    const beforeNow = await stateHash(wt);
    if (beforeNow !== r.before_hash) return { ...base, verified: false, actual_hash: beforeNow, detail: 'the before-commit does not have the recorded before-state' };
    if (r.replay === 'patch') {
      if (patchHash(r.patch) !== r.patch_hash) return { ...base, verified: false, actual_hash: null, detail: 'the recorded patch does not match its hash' };
      if (r.patch) {
        const file = path.join(dir, 'step.patch');
        fs.writeFileSync(file, r.patch);
        await git(['apply', '--binary', '--whitespace=nowarn', file], { cwd: wt, what: 'apply' });
      }
    } else {
      const deadline = Date.now() + r.work_item.constraints.timeout_ms;
      const out = await runSkill(r.work_item, { ...opts, root: wt, deadline, agentCommands: opts.agentCommands ?? {}, env: opts.env ?? stepEnv(os.tmpdir()), ...(r.blueprint ? { blueprint: r.blueprint } : {}) });
      if (!out.ok) return { ...base, verified: false, actual_hash: await stateHash(wt), detail: `the re-run failed: ${out.error ?? 'unknown error'}` };
    }
    const actual = await stateHash(wt);
    return actual === r.after_hash
      ? { ...base, verified: true, actual_hash: actual, detail: `replay reproduced ${actual}` }
      : { ...base, verified: false, actual_hash: actual, detail: `hash mismatch: expected ${r.after_hash}, got ${actual}` };
  } catch (err) {
    return { ...base, verified: false, actual_hash: null, detail: `replay failed: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    await git(['worktree', 'remove', '--force', wt], { cwd: repo, what: 'worktree remove' }).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

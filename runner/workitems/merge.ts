import { git } from '../workspace/git';
import { COMMITTER, head, rollback } from './state';

/**
 * Merging one step's commit into the quest's tree, all or nothing: a clean merge (a fast-forward
 * for the first step of a level) moves the quest branch; a conflict aborts the merge and resets
 * the tree to where it was, naming the conflicting files.
 */
export type MergeOutcome = { ok: true; head: string } | { ok: false; files: string[]; head: string };

export async function mergeStep(root: string, commit: string, message: string): Promise<MergeOutcome> {
  const before = await head(root);
  try {
    await git([...COMMITTER, 'merge', '-q', '--no-edit', '--no-verify', '-m', message, commit], { cwd: root, what: 'merge' });
    return { ok: true, head: await head(root) };
  } catch {
    const unmerged = await git(['diff', '--name-only', '--diff-filter=U', '-z'], { cwd: root, what: 'diff' }).catch(() => '');
    const files = [...new Set(unmerged.split('\0').filter(Boolean))].sort();
    await git(['merge', '--abort'], { cwd: root, what: 'merge --abort' }).catch(() => undefined);
    // Whatever the merge left (a half-written index, untracked files it refused to overwrite): gone.
    await rollback(root, before);
    return { ok: false, files, head: before };
  }
}

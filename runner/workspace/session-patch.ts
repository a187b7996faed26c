import { STORY_PATCH_MAX_CHARS } from '../../protocol';
import { runGit, snapshotWorktree } from './snapshot';

/**
 * The session's whole change against the commit it started from, as a unified diff (untracked
 * files included), for its story: the worktree is removed when the session ends, so this is the
 * last moment the diff can be read. Cut at STORY_PATCH_MAX_CHARS with a note.
 */
export async function sessionPatch(worktree: string, baseSha: string): Promise<string> {
  const snapshot = await snapshotWorktree(worktree, 'the session story');
  const { stdout } = await runGit(['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', baseSha, snapshot], worktree);
  if (stdout.length <= STORY_PATCH_MAX_CHARS) return stdout;
  return `${stdout.slice(0, STORY_PATCH_MAX_CHARS)}\n… diff cut at ${STORY_PATCH_MAX_CHARS} characters (${stdout.length} in all)\n`;
}

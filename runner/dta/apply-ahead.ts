import { applyAtomic, type AppliedFiles, type Original } from './atomic-apply';
import type { KeptProposal } from './kept-proposals';

/**
 * An approved apply's preparation started before git has said whether the tree is clean: the
 * journal (its fsync), the originals held open (atomic-apply.ts) and the staging's last writes
 * run beside `git status`, on the other core, instead of after it (40–120 ms of the apply's path on
 * bench:dta). Nothing in the tree is written or renamed until the engine lets it go on — once the
 * status says the tree is the one the kept proposal was made from, the proposal is taken, and the
 * run has reached the point where an apply began before. Any other answer stops it: its journal
 * and folder are removed, the tree was never touched, and the run goes on as without it.
 */
export interface ApplyAhead {
  /** The kept proposal it applies (the engine lets it go on only when it took this one). */
  readonly proposal: KeptProposal;
  /** The originals it journals: the engine lets it go on only when the files fit by these. */
  readonly originals: ReadonlyMap<string, Original>;
  /** Lets the renames begin; the files in place (or the apply rolled back, with its reason). */
  go(): Promise<AppliedFiles>;
  /** Stops it before any rename; settles when its folder is gone (a run may apply under the same id next). */
  stop(): Promise<void>;
}

export function applyAhead(root: string, journalDir: string, runId: string, proposal: KeptProposal, originals: ReadonlyMap<string, Original>): ApplyAhead {
  let release!: () => void;
  let refuse!: (err: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    release = resolve;
    refuse = reject;
  });
  const applied = applyAtomic(root, journalDir, runId, proposal.proposed.changes, { tree: proposal.proposed.tree, originals, staged: proposal.staged, ready: gate });
  // Awaited by go() or stop(); settled meanwhile even when neither comes (a run that threw first).
  applied.catch(() => undefined);
  return {
    proposal,
    originals,
    go() {
      release();
      return applied;
    },
    async stop() {
      refuse(new Error('stopped before its renames'));
      await applied.then(
        // Let go already: the apply is the engine's to finish, not this one's to stop.
        () => undefined,
        () => undefined,
      );
    },
  };
}

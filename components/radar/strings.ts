/** What the conflict radar says, in one place (tests assert on these). */
export const RADAR_STRINGS = {
  popoverTitle: 'Conflict radar',
  sharedFiles: 'Both changed',
  sharedDirs: 'Both working in',
  timeline: 'Who got there first',
  hunks: 'Overlapping changes',
  loadingHunks: 'Reading both diffs on the runner…',
  noHunks: 'No changed lines in the shared files yet.',
  mergePreview: 'Merge preview',
  merging: 'Running git merge-tree on the runner…',
  mergeClean: 'These branches merge cleanly.',
  mergeConflicts: (n: number) => `${n} file${n === 1 ? '' : 's'} would conflict:`,
  dtaNoPreview: 'A DTA run has no worktree to preview; its files are locked until it finishes.',
  close: 'Close',
  first: 'first',
} as const;

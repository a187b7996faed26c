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
  /** What a side is in the preview when it is not a live worktree. */
  dtaSide: 'the DTA run’s proposed patch on its base commit',
  dtaName: (id: string) => `DTA run ${id}`,
  regionAt: (line: number) => `line ${line} of the merged file`,
  /** A refusal in words: what failed, then the runner's or the server's reason. */
  previewFailed: 'The merge preview could not run:',
  hunksFailed: 'The diffs could not be read:',
  close: 'Close',
  first: 'first',
} as const;

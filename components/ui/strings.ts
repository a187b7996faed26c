import type { SessionState, SessionSummary } from '../../protocol';

/** User-facing strings in one place; tests assert on these, not on copies. */
export const STRINGS = {
  appName: 'Agent Village',
  setupTitle: 'Create the first admin account',
  setupButton: 'Create account and enter the village',
  loginTitle: 'Log in to the village',
  loginButton: 'Log in',
  spawnButton: 'Spawn agent',
  openTerminal: 'Open terminal',
  stopSession: 'Stop',
  closeTerminal: 'Close terminal',
  replaying: 'Replaying the screen…',
  readOnly: 'Read-only: viewers can watch but not type.',
  noRunner: 'No runner is online. The attached runner starts with the server; remote runners need a token (Settings).',
  addRepoButton: 'Add repository',
  pauseSession: 'Pause',
  resumeSession: 'Resume',
  runnerLost: 'Runner lost — waiting for it to come back',
  changedFiles: 'Changed files',
  testsTitle: 'Tests',
  noChanges: 'No changes yet.',
  noTests: 'No test run yet.',
  membersTitle: 'Members',
  inviteButton: 'Create invite link',
  createMemberButton: 'Create with one-time password',
  removeMember: 'Remove',
  inviteLinkOnce: 'Send this link to them; it is shown once and works for 7 days:',
  oneTimePasswordOnce: 'Give them this one-time password; it is shown once and must be changed at first login:',
  auditTitle: 'Audit log',
  auditLink: 'Audit',
  auditExport: 'Export CSV',
  auditFilter: 'Filter',
  adminsOnly: 'Admins only: ask an admin of this organisation if you need this page.',
  acceptInviteTitle: 'Join the village',
  acceptInviteButton: 'Join and enter the village',
  changePasswordTitle: 'Choose a new password',
  changePasswordButton: 'Change password',
  mustChangePassword: 'Your account was created with a one-time password: choose your own to continue.',
  workshopLink: 'Workshop',
  workshopTitle: 'Workshop',
  workshopIntro:
    'Deterministic agents: commands your runners offer as blueprints (a JSON file each in their blueprints folder). Fill in the parameters, run one, read its result.',
  noAgents: 'No deterministic agents yet. Put a blueprint (*.json) in a runner’s blueprints folder; it appears here within seconds.',
  runButton: 'Run',
  runsTitle: 'Runs',
  noRuns: 'No runs yet.',
  fixErrors: 'Fix the highlighted parameters first.',
  viewersCannotRun: 'Viewers can watch runs; starting one needs the operator role.',
} as const;

/** What a running agent is doing, in words (from its hooks or idle detection). */
export function activityLabel(s: Pick<SessionSummary, 'state' | 'activity' | 'activity_since'>, now = Date.now()): string {
  if (s.state !== 'RUNNING') return stateLabel(s.state);
  switch (s.activity) {
    case 'waiting_for_input':
      return 'waiting for input';
    case 'idle': {
      const minutes = s.activity_since ? Math.floor((now - s.activity_since) / 60_000) : 0;
      return minutes >= 1 ? `idle for ${minutes} min` : 'idle';
    }
    default:
      return 'working';
  }
}

/** A sprite's state in words a person can read. */
export function stateLabel(state: SessionState): string {
  switch (state) {
    case 'CREATED':
      return 'queued';
    case 'PREPARING_WORKSPACE':
      return 'preparing workspace';
    case 'STARTING_PROVIDER':
      return 'starting';
    case 'RUNNING':
      return 'working';
    case 'WAITING_FOR_APPROVAL':
      return 'waiting for approval';
    case 'PAUSED_BY_HUMAN':
      return 'paused';
    case 'STOPPING':
      return 'stopping';
    case 'COMPLETED':
      return 'finished';
    case 'FAILED':
      return 'failed';
  }
}

import type { AlertSummary, SessionState, SessionSummary } from '../../protocol';
import { PATROL_KIND_LABELS } from '../../protocol/patrols';

/** User-facing strings in one place; tests assert on these, not on copies. */
export const STRINGS = {
  appName: 'Agent Village',
  setupTitle: 'Create the first admin account',
  setupButton: 'Create account and enter the village',
  setupTokenLabel: 'Setup token',
  setupTokenHint: 'Open the link the server printed in its log ("first run: open …/setup?token=…"), or paste its token here.',
  loginTitle: 'Log in to the village',
  loginButton: 'Log in',
  spawnButton: 'Spawn agent',
  openTerminal: 'Open terminal',
  stopSession: 'Stop',
  closeTerminal: 'Close terminal',
  inputTimeout: 'The server did not confirm your last keys in time: the connection may be down, so check the screen before typing on.',
  replaying: 'Replaying the screen…',
  replayControls: 'Replay controls',
  replayPlay: 'Play',
  replayPause: 'Pause',
  replayTime: 'Moment of the session',
  replaySpeed: 'Replay speed',
  replayingAt: 'replaying',
  replayLive: 'live',
  replayEnded: 'ended: drag to replay',
  replayBackToLive: 'Back to live',
  replayNextApproval: 'next approval',
  replayNextTest: 'next test run',
  replayNextFile: 'next file touch',
  replayNextError: 'next error',
  // What the scrubber's jump buttons show (their accessible names are the replayNext* above): short, so
  // the whole scrubber stays one row in a 1280-px window.
  replayJumpApproval: '» approval',
  replayJumpTest: '» test',
  replayJumpFile: '» file',
  replayJumpError: '» error',
  replayLiveShort: '» live',
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
  redactionsTitle: 'Redactions',
  noRedactions: 'Nothing masked so far.',
  redactionsUnavailable: 'The redaction receipt could not be loaded.',
  orgSecret: 'secret',
  maskedByRunner: 'runner',
  maskedByControlPlane: 'control plane',
  membersTitle: 'Members',
  inviteButton: 'Create invite link',
  createMemberButton: 'Create with one-time password',
  removeMember: 'Remove',
  inviteLinkOnce: 'Send this link to them; it is shown once and works for 7 days:',
  oneTimePasswordOnce: 'Give them this one-time password; it is shown once and must be changed at first login:',
  oneTimePasswordExisting: 'If they already have an account, they open this link instead and sign in with their own password:',
  pendingFirstSignIn: 'pending first sign-in',
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
  usageLink: 'Usage',
  usageTitle: 'Usage',
  usageExport: 'Export CSV',
  usagePeriod: 'Period',
  usageAgentChart: 'Agent-minutes per day, by provider',
  usageConcurrencyChart: 'Concurrency over time (per hour)',
  usagePatrolChart: 'Patrol minutes per day',
  usageTopRepos: 'Top repositories',
  usageTopUsers: 'Top users',
  usageByProvider: 'By provider',
  usageNothing: 'No usage in this period yet.',
  usageFromTicks: 'Every figure is computed from the usage ticks runners sent (one per session every 30 seconds).',
  billingLink: 'Billing',
  billingTitle: 'Billing',
  billingPlan: 'Plan',
  billingCurrent: 'This period',
  billingInvoices: 'Invoices',
  billingNoInvoices: 'No closed periods yet: the first invoice is made when this month ends.',
  billingChangePlan: 'Change plan',
  billingPlans: 'Plans',
  billingSavePlan: 'Save plan',
  billingPlansReadOnly: 'Only the installation admin (the account made at setup) can change the plans.',
  limitsLine: 'Plan',
  patrolsLink: 'Patrols',
  patrolsTitle: 'Patrols',
  setUpPatrols: 'Set up patrols',
  runNow: 'Run now',
  savePatrol: 'Save',
  alertsTitle: 'Alerts',
  noAlerts: 'No alerts: every patrol passes (or none ran yet).',
  closeAlert: 'Close alert',
  questTitle: 'Quest',
  sendAgent: 'Send an agent',
  operatorsOnlyQuest: 'Operators can send an agent to fix it.',
  showLog: 'Log',
  webhookTitle: 'Push webhook',
  showSecret: 'Show secret',
  rotateSecret: 'Rotate secret',
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

/** The task a "send an agent" quest starts with, prefilled from the alert (people may edit it). */
export function questFor(a: Pick<AlertSummary, 'kind' | 'message' | 'path' | 'line' | 'excerpt'>): string {
  const label = PATROL_KIND_LABELS[a.kind].toLowerCase();
  const where = a.path ? `${a.path}${a.line ? `:${a.line}` : ''}` : 'the repository';
  const firstLines = a.excerpt.split('\n').filter((l) => l.trim()).slice(0, 6).join('\n');
  return [
    `The ${label} patrol fails in ${where}.`,
    `Alert: ${a.message}`,
    firstLines ? `Log:\n${firstLines}` : '',
    `Fix the cause (do not weaken or skip the check), then run the ${label} again and make sure it passes.`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** A building's health in words, for the list beside the village. */
export function healthLabel(h: number | null | undefined): string {
  return h === null || h === undefined ? 'no patrol results yet' : `health ${Math.round(h * 100)}%`;
}

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

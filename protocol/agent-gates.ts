/**
 * Words a session's AGENT_ACTIVITY detail starts with when an agent CLI stands at a gate nobody
 * in the terminal may be watching: a sign-in screen, a question, a folder-trust prompt, an API it
 * cannot reach. The runner writes them (runner/providers/screen-watch.ts); the village shows such
 * a detail on the sprite instead of a plain "waiting for input".
 */
export const AGENT_GATE = {
  signIn: 'needs sign-in',
  answer: 'waiting for your answer',
  unreachable: 'cannot reach its API',
  configError: 'rejected its configuration',
} as const;
export type AgentGateKind = keyof typeof AGENT_GATE;

/** The gate text to show for an activity detail, or null when the detail names no gate. */
export function agentGateText(detail: string | null | undefined): string | null {
  if (!detail) return null;
  return Object.values(AGENT_GATE).some((p) => detail.startsWith(p)) ? detail : null;
}

import { TerminalHistorySchema, TerminalSeekSchema, TerminalTimelineRequestSchema } from '../../protocol';
import type { Services } from '../services';
import type { Principal } from '../services/auth';
import { handle } from './handler';
import type { UiEvent } from './ui-limits';

type On = (event: UiEvent, handler: (body: unknown, ack?: unknown) => Promise<void>) => void;

/**
 * Time travel over a session's terminal (live or ended): seek to a screen, page through the
 * events after it for playback, and list the moments worth jumping to. Whoever may view the
 * session may replay it: `sessions.get` is the same check as attach.
 */
export function attachTerminalTimeTravel(on: On, services: Services, principal: () => Promise<Principal>): void {
  on(
    'terminal:seek',
    handle('terminal:seek', TerminalSeekSchema, async ({ session_id, seq, ts }) => {
      await services.sessions.get(await principal(), session_id);
      return services.terminalScreens.seek(session_id, { seq, ts });
    }),
  );
  on(
    'terminal:history',
    handle('terminal:history', TerminalHistorySchema, async ({ session_id, after_seq, limit }) => {
      await services.sessions.get(await principal(), session_id);
      return { events: await services.terminalScreens.history(session_id, after_seq, limit) };
    }),
  );
  on(
    'terminal:timeline',
    handle('terminal:timeline', TerminalTimelineRequestSchema, async ({ session_id }) => {
      await services.sessions.get(await principal(), session_id);
      return services.terminalScreens.timeline(session_id);
    }),
  );
}

import type { Namespace } from 'socket.io';
import type { WireEvent } from '../../protocol';
import type { Broadcaster } from '../services/ports';

/** The inter-node event that carries a session's live events to the other nodes' viewers. */
const RELAY_EVENT = 'cluster:session-events';

/**
 * Live session output goes to each node's own attached viewers (ui-namespace.ts keeps them per
 * node, with replay and seq filtering). With several nodes the events ingested on the runner's
 * node are relayed through the adapter to the others, which deliver them to their viewers the same
 * way; a viewer's seq filter drops anything it already has, so nothing doubles.
 */
export function relaySessionEvents(nsp: Namespace, local: Broadcaster, isOpen: () => boolean): Broadcaster {
  nsp.on(RELAY_EVENT as never, (sessionId: unknown, events: unknown) => {
    if (typeof sessionId !== 'string' || !Array.isArray(events)) return;
    local.sessionEvents(sessionId, events as WireEvent[]);
  });
  return {
    ...local,
    sessionEvents(sessionId, events) {
      local.sessionEvents(sessionId, events);
      if (isOpen()) nsp.serverSideEmit(RELAY_EVENT, sessionId, events);
    },
  };
}

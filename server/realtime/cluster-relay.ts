import { randomBytes } from 'node:crypto';
import type { Namespace } from 'socket.io';
import { ClusterMemberChangeSchema, type WireEvent } from '../../protocol';
import type { MemberEvents } from '../services/member-events';
import type { Broadcaster } from '../services/ports';

/** The inter-node event that carries a session's live events to the other nodes' viewers. */
const RELAY_EVENT = 'cluster:session-events';
/**
 * How long a receiving node holds later relay messages while an earlier one is missing. The
 * Postgres adapter sends a message over NOTIFY's 8,000 bytes through a table the receiver reads
 * back, so a big batch can arrive after the small one sent behind it; a viewer's seq filter would
 * then drop the big one for good. A message that never comes (a node died mid-send) stops
 * holding the rest after this long; the viewer's own catch-up from the database covers the hole.
 */
export const RELAY_REORDER_WAIT_MS = 2_000;
/** Relay streams idle this long are forgotten (one small entry per session and sending node). */
const RELAY_STREAM_IDLE_MS = 10 * 60_000;

type Stream = { next: number; held: Map<number, WireEvent[]>; timer: NodeJS.Timeout | null; touched: number };

/**
 * Delivers each origin's relay messages for a session in the order they were sent, whatever
 * order the adapter hands them over in: message n+1 waits for n (at most RELAY_REORDER_WAIT_MS).
 */
export function createRelayOrder(deliver: (sessionId: string, events: WireEvent[]) => void, waitMs = RELAY_REORDER_WAIT_MS) {
  const streams = new Map<string, Stream>();

  function drain(sessionId: string, s: Stream) {
    for (let events = s.held.get(s.next); events; events = s.held.get(s.next)) {
      s.held.delete(s.next);
      s.next++;
      deliver(sessionId, events);
    }
    if (s.timer && s.held.size === 0) {
      clearTimeout(s.timer);
      s.timer = null;
    }
  }

  function prune(now: number) {
    for (const [key, s] of streams) if (now - s.touched > RELAY_STREAM_IDLE_MS && s.held.size === 0) streams.delete(key);
  }

  return {
    receive(origin: string, n: number, sessionId: string, events: WireEvent[]) {
      const key = `${origin}\0${sessionId}`;
      const now = Date.now();
      let s = streams.get(key);
      if (!s) {
        if (streams.size > 0 && streams.size % 1_000 === 0) prune(now);
        s = { next: n, held: new Map(), timer: null, touched: now };
        streams.set(key, s);
      }
      s.touched = now;
      if (n < s.next) return deliver(sessionId, events); // late past a gap we gave up on: the seq filter decides
      s.held.set(n, events);
      drain(sessionId, s);
      if (s.held.size > 0 && !s.timer) {
        const stream = s;
        stream.timer = setTimeout(() => {
          // Give up on the missing message(s): go on from the earliest one held.
          stream.timer = null;
          stream.next = Math.min(...stream.held.keys());
          drain(sessionId, stream);
        }, waitMs);
        stream.timer.unref();
      }
    },
    close() {
      for (const s of streams.values()) if (s.timer) clearTimeout(s.timer);
      streams.clear();
    },
  };
}

/**
 * Live session output goes to each node's own attached viewers (ui-namespace.ts keeps them per
 * node, with replay and seq filtering). With several nodes the events ingested on the runner's
 * node are relayed through the adapter to the others, which deliver them to their viewers the same
 * way, in the order the runner's node sent them (see createRelayOrder); a viewer's seq filter
 * drops anything it already has, so nothing doubles.
 */
export function relaySessionEvents(nsp: Namespace, local: Broadcaster, isOpen: () => boolean): Broadcaster {
  // This process's relay stream name: a restarted node starts new streams, not old ones at 0.
  const origin = randomBytes(8).toString('hex');
  /** Per session: the next relay number and when it was last used (idle ones are forgotten like the receivers' streams). */
  const sent = new Map<string, { n: number; touched: number }>();
  const order = createRelayOrder((sessionId, events) => local.sessionEvents(sessionId, events));
  nsp.on(RELAY_EVENT as never, (from: unknown, n: unknown, sessionId: unknown, events: unknown) => {
    if (typeof from !== 'string' || typeof n !== 'number' || !Number.isSafeInteger(n) || typeof sessionId !== 'string' || !Array.isArray(events)) return;
    order.receive(from, n, sessionId, events as WireEvent[]);
  });
  return {
    ...local,
    sessionEvents(sessionId, events, utf8) {
      local.sessionEvents(sessionId, events, utf8);
      if (!isOpen()) return;
      const now = Date.now();
      let entry = sent.get(sessionId);
      if (!entry) {
        // A stream that starts over at 0 after being forgotten is still delivered: a receiver
        // that kept its stream hands numbers below its next one straight to the seq filter.
        if (sent.size > 0 && sent.size % 1_000 === 0) for (const [id, e] of sent) if (now - e.touched > RELAY_STREAM_IDLE_MS) sent.delete(id);
        sent.set(sessionId, (entry = { n: 0, touched: now }));
      }
      entry.touched = now;
      nsp.serverSideEmit(RELAY_EVENT, origin, entry.n++, sessionId, events);
    },
  };
}

const MEMBER_EVENT = 'cluster:member-change';

/**
 * A change of role, membership or logins made through one node reaches the open sockets on every
 * node at once (typing rights dropped, a removed member disconnected), not only at their next
 * re-check. Changes from other nodes are applied as if made here, and not sent on again.
 */
export function relayMemberChanges(nsp: Namespace, events: MemberEvents, isOpen: () => boolean): void {
  let applyingRemote = false;
  events.on((change) => {
    if (!applyingRemote && isOpen()) nsp.serverSideEmit(MEMBER_EVENT, change);
  });
  nsp.on(MEMBER_EVENT as never, (raw: unknown) => {
    const change = ClusterMemberChangeSchema.safeParse(raw);
    if (!change.success) return console.error('[server] ignored a malformed member change from another node');
    applyingRemote = true;
    try {
      events.emit(change.data);
    } finally {
      applyingRemote = false;
    }
  });
}

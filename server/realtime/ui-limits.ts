import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { fail, type Result, type UiClientToServerEvents } from '../../protocol';

export type UiEvent = keyof UiClientToServerEvents;

/**
 * Per-socket allowance of each /ui event (points per window of `seconds`), generous for people
 * and far below what stalls the server: an attach or spawn reads the database, so a socket gets
 * a handful per second; input and flow-control acks follow typing and output, so many more.
 */
export const UI_EVENT_LIMITS: Record<UiEvent, { points: number; seconds: number }> = {
  'session:attach': { points: 20, seconds: 10 },
  'session:detach': { points: 40, seconds: 10 },
  'session:spawn': { points: 10, seconds: 10 },
  'terminal:input': { points: 400, seconds: 1 },
  'terminal:resize': { points: 60, seconds: 1 },
  // One ack per FLOW_CONTROL.ACK_CHARS (5,000) characters parsed: 5,000 a second is 25 MB/s of
  // output, more than xterm parses; an ack touches no database, so the room costs nothing.
  'terminal:ack': { points: 5_000, seconds: 1 },
  // Dragging the scrubber seeks often; each seek reads one snapshot and at most one interval of events.
  'terminal:seek': { points: 30, seconds: 1 },
  // Playback at 16× asks for a page every few hundred events.
  'terminal:history': { points: 60, seconds: 1 },
  'terminal:timeline': { points: 10, seconds: 10 },
};
/** A socket that keeps sending after being refused — this many times its allowance in one window — is disconnected. */
export const ABUSE_FACTOR = 3;
/** Terminals one socket may have attached at once (the dock shows a few; each costs a replay and a viewer). */
export const MAX_ATTACHED_PER_SOCKET = 8;

export const UI_LIMIT_MESSAGES = {
  rate: (event: string, seconds: number) => `Too many ${event} events from this connection: wait ${seconds} s and try again.`,
  abuse: 'This connection sent far too many events and is closed.',
  attached: `At most ${MAX_ATTACHED_PER_SOCKET} terminals can be attached on one connection: detach one first.`,
};

export type Verdict = { ok: true } | { ok: false; reply: Result<never>; disconnect: boolean };

/** One limiter per event kind, keyed by socket id (sockets live on one node: memory is the right store). */
export function createUiEventLimits() {
  const limiters = new Map(
    (Object.keys(UI_EVENT_LIMITS) as UiEvent[]).map((e) => [e, new RateLimiterMemory({ keyPrefix: `ui:${e}`, points: UI_EVENT_LIMITS[e].points, duration: UI_EVENT_LIMITS[e].seconds })]),
  );
  return {
    /** Take one event of `socketId`'s allowance: ok, refused, or refused and to be disconnected. */
    async take(socketId: string, event: UiEvent): Promise<Verdict> {
      try {
        await limiters.get(event)!.consume(socketId);
        return { ok: true };
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        const { points, seconds } = UI_EVENT_LIMITS[event];
        const disconnect = res.consumedPoints > points * ABUSE_FACTOR;
        return { ok: false, disconnect, reply: fail('RATE_LIMITED', disconnect ? UI_LIMIT_MESSAGES.abuse : UI_LIMIT_MESSAGES.rate(event, seconds)) };
      }
    },
    /** A socket is gone: its counters go too. */
    forget(socketId: string) {
      for (const l of limiters.values()) void l.delete(socketId);
    },
  };
}

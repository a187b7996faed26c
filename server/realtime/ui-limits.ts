import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
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
  // A terminal acks once per FLOW_CONTROL.ACK_CHARS parsed or ACK_DELAY_MS (tens a second in a
  // flood): 5,000 is room for every terminal a socket may attach; an ack touches no database.
  'terminal:ack': { points: 5_000, seconds: 1 },
  // Dragging the scrubber seeks often; each seek reads one snapshot and at most one interval of events.
  'terminal:seek': { points: 30, seconds: 1 },
  // Playback at 16× asks for a page every few hundred events.
  'terminal:history': { points: 60, seconds: 1 },
  'terminal:timeline': { points: 10, seconds: 10 },
};
/** A socket that keeps sending after being refused — this many times its allowance in one window — is disconnected. */
export const ABUSE_FACTOR = 3;
/**
 * A person's sockets together (tabs, windows, on any node) get this many times one socket's
 * allowance: a few tabs are normal, but opening more sockets (or reaching more nodes) does not
 * multiply what one account may send.
 */
export const USER_LIMIT_SHARE = 3;
/** Terminals one socket may have attached at once (the dock shows a few; each costs a replay and a viewer). */
export const MAX_ATTACHED_PER_SOCKET = 8;

export const UI_LIMIT_MESSAGES = {
  rate: (event: string, seconds: number) => `Too many ${event} events from this connection: wait ${seconds} s and try again.`,
  abuse: 'This connection sent far too many events and is closed.',
  user: (event: string, seconds: number) => `Too many ${event} events from your account (all your tabs together): wait ${seconds} s and try again.`,
  attached: `At most ${MAX_ATTACHED_PER_SOCKET} terminals can be attached on one connection: detach one first.`,
};

export type Verdict = { ok: true } | { ok: false; reply: Result<never>; disconnect: boolean };

export interface UiEventLimits {
  /** Take one event from the socket's allowance, then from its user's: ok, refused, or refused and to be disconnected. */
  take(socketId: string, event: UiEvent, userId?: string): Promise<Verdict>;
  /** A socket is gone: its counters go too. */
  forget(socketId: string): void;
  close(): Promise<void>;
}

/**
 * Two layers per event kind. Per socket, in memory: a socket lives on one node, so memory is the
 * right store, and the abuse disconnect is decided there. Per user, shared: with `redisUrl` the
 * user's budget is a Redis counter every node takes from (RateLimiterRedis), so a person's sockets
 * on node A and node B share one allowance; an in-memory limiter with the same numbers stands in
 * while Redis is unreachable (insurance), so an outage neither blocks everyone nor lifts the limits.
 */
export function createUiEventLimits(opts: { redisUrl?: string; /** the installation's Redis key prefix */ prefix?: string } = {}): UiEventLimits {
  // No offline queue: a limiter call must fail fast to the insurance limiter, not wait for Redis.
  const redis = opts.redisUrl ? new Redis(opts.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }) : null;
  redis?.on('error', (err) => console.error('[server] /ui rate limits: redis', err.message));
  const events = Object.keys(UI_EVENT_LIMITS) as UiEvent[];
  const perSocket = new Map(events.map((e) => [e, new RateLimiterMemory({ keyPrefix: `ui:${e}`, points: UI_EVENT_LIMITS[e].points, duration: UI_EVENT_LIMITS[e].seconds })]));
  const perUser = new Map<UiEvent, RateLimiterAbstract>(
    events.map((e) => {
      const points = UI_EVENT_LIMITS[e].points * USER_LIMIT_SHARE;
      const duration = UI_EVENT_LIMITS[e].seconds;
      const memory = new RateLimiterMemory({ keyPrefix: `ui-user:${e}`, points, duration });
      return [e, redis ? new RateLimiterRedis({ storeClient: redis, keyPrefix: `${opts.prefix ?? 'agent-village'}:ui-user:${e}`, points, duration, insuranceLimiter: memory }) : memory];
    }),
  );
  return {
    async take(socketId, event, userId) {
      const { points, seconds } = UI_EVENT_LIMITS[event];
      try {
        await perSocket.get(event)!.consume(socketId);
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        const disconnect = res.consumedPoints > points * ABUSE_FACTOR;
        return { ok: false, disconnect, reply: fail('RATE_LIMITED', disconnect ? UI_LIMIT_MESSAGES.abuse : UI_LIMIT_MESSAGES.rate(event, seconds)) };
      }
      // Only what the socket's own allowance let through counts against the user: a flooding tab
      // is stopped at its socket and does not starve the same person's other tabs.
      if (!userId) return { ok: true };
      try {
        await perUser.get(event)!.consume(userId);
        return { ok: true };
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        return { ok: false, disconnect: false, reply: fail('RATE_LIMITED', UI_LIMIT_MESSAGES.user(event, seconds)) };
      }
    },
    forget(socketId) {
      for (const l of perSocket.values()) void l.delete(socketId);
    },
    async close() {
      redis?.disconnect();
    },
  };
}

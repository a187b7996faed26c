import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from './errors';

/**
 * Failed logins allowed per account in ACCOUNT_WINDOW_S before the account is throttled: enough
 * for someone who mistypes, far too few to guess a password.
 */
export const LOGIN_FAILS_PER_ACCOUNT = 10;
export const ACCOUNT_WINDOW_S = 15 * 60;
/** Failed logins allowed from one address in IP_WINDOW_S (password spraying over many accounts). */
export const LOGIN_FAILS_PER_IP = 50;
export const IP_WINDOW_S = 60 * 60;

export interface LoginThrottle {
  /**
   * Take one attempt from the account's and the address's allowance before the password is
   * checked (atomic, so parallel guesses cannot slip past the limit); throws RATE_LIMITED with
   * `retryAfterS` when either is used up.
   */
  attempt(email: string, ip: string | null | undefined): Promise<void>;
  /** The password was right: the account's count starts again and the address gets its attempt back. */
  succeeded(email: string, ip: string | null | undefined): Promise<void>;
  close(): Promise<void>;
}

export class RateLimitedError extends AppError {
  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super('RATE_LIMITED', message);
    this.name = 'AppError'; // recognised by shape across bundles (errors.ts)
  }
}

const minutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

/**
 * Login throttling with rate-limiter-flexible: in memory by default, in Redis when `redisUrl` is
 * given (then an in-memory limiter with the same numbers stands in while Redis is unreachable).
 */
export function createLoginThrottle(opts: { redisUrl?: string; /** the installation's Redis key prefix */ prefix?: string } = {}): LoginThrottle {
  const redis = opts.redisUrl ? new Redis(opts.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }) : null;
  redis?.on('error', (err) => console.error('[server] login throttle: redis', err.message));
  const make = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract => {
    const memory = new RateLimiterMemory({ keyPrefix, points, duration });
    return redis ? new RateLimiterRedis({ storeClient: redis, keyPrefix: `${opts.prefix ?? 'agent-village'}:login:${keyPrefix}`, points, duration, insuranceLimiter: memory }) : memory;
  };
  const byAccount = make('account', LOGIN_FAILS_PER_ACCOUNT, ACCOUNT_WINDOW_S);
  const byIp = make('ip', LOGIN_FAILS_PER_IP, IP_WINDOW_S);
  const accountKey = (email: string) => email.trim().toLowerCase();

  return {
    async attempt(email, ip) {
      if (ip) {
        try {
          await byIp.consume(ip);
        } catch (res) {
          if (!(res instanceof RateLimiterRes)) throw res;
          throw new RateLimitedError(`Too many failed logins from your address: try again in ${minutes(res.msBeforeNext)} minute(s).`, res.msBeforeNext / 1000);
        }
      }
      try {
        await byAccount.consume(accountKey(email));
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        throw new RateLimitedError(`Too many failed logins for this account: try again in ${minutes(res.msBeforeNext)} minute(s).`, res.msBeforeNext / 1000);
      }
    },
    async succeeded(email, ip) {
      await byAccount.delete(accountKey(email));
      if (ip) await byIp.reward(ip, 1);
    },
    async close() {
      redis?.disconnect();
    },
  };
}

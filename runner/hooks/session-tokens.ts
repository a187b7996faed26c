import crypto from 'node:crypto';
import { z } from 'zod';

/**
 * Per-session tokens (agent-runner.md §6.1, issue 12): the runner's long-lived `avr_` token only
 * registers the runner; everything a session calls back with (hooks, guard shims, `av-secret`,
 * later `av-dta`) carries a token that names its org, repository and session and an expiry,
 * signed with HMAC-SHA256 under a key that lives only in this runner process's memory.
 *
 * The signature makes the scope unforgeable; the live table makes the token die with its session
 * (and lets a session be re-issued a token, which retires the old one). A token checks out only
 * when all four hold: the signature, the expiry, the session it names is the session the request
 * is for, and that session is still live with this very token.
 */

/** A session's token outlives no session: this caps it even if the session never ends. */
export const SESSION_TOKEN_TTL_MS = 12 * 60 * 60_000;
/** HMAC key size: SHA-256's block-size-safe 32 bytes. */
const KEY_BYTES = 32;
/** A per-token nonce, so two tokens for one session never collide (re-issue retires the old one). */
const NONCE_BYTES = 12;
export const SESSION_TOKEN_PREFIX = 'avs1_';
/** Longest token a client may present; a little over what mint() produces with the longest ids. */
export const MAX_SESSION_TOKEN_CHARS = 1_000;

export interface SessionScope {
  org_id: string;
  repo_id: string;
  session_id: string;
}

const ClaimsSchema = z.object({
  o: z.string().max(200),
  r: z.string().max(200),
  s: z.string().min(1).max(200),
  exp: z.number().int(),
  n: z.string().min(1).max(40),
});
type Claims = z.infer<typeof ClaimsSchema>;

export type TokenCheck =
  | { ok: true; scope: SessionScope; expiresAt: number }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' | 'wrong_session' | 'session_ended' };

/** What each refusal tells the caller (the reason is safe to say: it names no secret). */
export const TOKEN_REFUSALS: Record<Exclude<TokenCheck, { ok: true }>['reason'], { status: number; message: string }> = {
  malformed: { status: 401, message: 'no valid session token' },
  bad_signature: { status: 401, message: 'session token not issued by this runner' },
  expired: { status: 401, message: 'session token expired' },
  session_ended: { status: 401, message: 'session token is for a session that has ended' },
  wrong_session: { status: 403, message: 'session token is for another session' },
};

export class SessionTokens {
  private readonly key: Buffer;
  /** session id → nonce of its one live token. */
  private readonly live = new Map<string, string>();

  constructor(
    private readonly now: () => number = Date.now,
    key: Buffer = crypto.randomBytes(KEY_BYTES),
  ) {
    this.key = key;
  }

  /** A fresh token for the session; any earlier token of the same session stops working. */
  mint(scope: SessionScope, ttlMs: number = SESSION_TOKEN_TTL_MS): string {
    const claims: Claims = {
      o: scope.org_id,
      r: scope.repo_id,
      s: scope.session_id,
      exp: this.now() + ttlMs,
      n: crypto.randomBytes(NONCE_BYTES).toString('base64url'),
    };
    this.live.set(scope.session_id, claims.n);
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${SESSION_TOKEN_PREFIX}${body}.${this.sign(body)}`;
  }

  /** The session ended: its token is refused from now on, whatever its expiry says. */
  end(sessionId: string): void {
    this.live.delete(sessionId);
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Checks a presented token for a request that acts for `sessionId`. */
  check(token: string | undefined, sessionId: string): TokenCheck {
    if (!token || token.length > MAX_SESSION_TOKEN_CHARS || !token.startsWith(SESSION_TOKEN_PREFIX)) return { ok: false, reason: 'malformed' };
    const [body, mac, extra] = token.slice(SESSION_TOKEN_PREFIX.length).split('.');
    if (!body || !mac || extra !== undefined) return { ok: false, reason: 'malformed' };
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
    let claims: Claims;
    try {
      const parsed = ClaimsSchema.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
      if (!parsed.success) return { ok: false, reason: 'malformed' };
      claims = parsed.data;
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    // Scope first: a token for session A says "wrong session" at B even after A has ended.
    if (claims.s !== sessionId) return { ok: false, reason: 'wrong_session' };
    if (this.now() >= claims.exp) return { ok: false, reason: 'expired' };
    if (this.live.get(claims.s) !== claims.n) return { ok: false, reason: 'session_ended' };
    return { ok: true, scope: { org_id: claims.o, repo_id: claims.r, session_id: claims.s }, expiresAt: claims.exp };
  }

  private sign(body: string): string {
    return crypto.createHmac('sha256', this.key).update(`${SESSION_TOKEN_PREFIX}${body}`).digest('base64url');
  }
}

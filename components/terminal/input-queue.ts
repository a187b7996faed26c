import type { Result } from '../../protocol';

/** A refused send waits this long before it is tried again (the server's window is one second). */
export const INPUT_RETRY_MS = 250;
/** Tries per refused send before the keys are dropped and the user told. */
export const INPUT_MAX_TRIES = 8;
/** One message never carries more than this (a huge paste goes in pieces, in order). */
export const INPUT_MAX_CHARS = 16 * 1024;

export type SendInput = (data: string) => Promise<Result<unknown> | undefined>;

/**
 * Keys leave one message at a time: the first key goes at once, keys typed while it is on its way
 * join the next message. Order is kept, the message rate is bounded by the round trip (so typing,
 * pasting or a program's mouse reports never run into the server's per-second limit), and a key
 * the server refused for rate is sent again rather than lost. Other refusals (the session ended,
 * no right to type) drop what is queued: it could never arrive.
 */
export class InputQueue {
  private queued = '';
  private inFlight = false;
  private disposed = false;

  constructor(
    private readonly send: SendInput,
    private readonly onError: (message: string) => void,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  push(data: string): void {
    if (this.disposed || !data) return;
    this.queued += data;
    if (!this.inFlight) void this.drain();
  }

  /** Characters typed and not yet accepted by the server. */
  get pending(): number {
    return this.queued.length;
  }

  dispose(): void {
    this.disposed = true;
    this.queued = '';
  }

  private async drain(): Promise<void> {
    this.inFlight = true;
    try {
      while (this.queued && !this.disposed) {
        const data = takeChunk(this.queued);
        this.queued = this.queued.slice(data.length);
        const refusal = await this.deliver(data);
        if (refusal) {
          this.queued = '';
          this.onError(refusal);
        }
      }
    } finally {
      this.inFlight = false;
    }
  }

  /** Sends one message until it is accepted; returns the refusal to show, or null. */
  private async deliver(data: string): Promise<string | null> {
    for (let attempt = 1; ; attempt++) {
      let res: Result<unknown> | undefined;
      try {
        res = await this.send(data);
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
      if (!res || res.ok) return null;
      if (res.error.code !== 'RATE_LIMITED' || attempt >= INPUT_MAX_TRIES || this.disposed) return res.error.message;
      await this.sleep(INPUT_RETRY_MS);
    }
  }
}

/** The next message: at most INPUT_MAX_CHARS, never splitting a surrogate pair. */
function takeChunk(text: string): string {
  if (text.length <= INPUT_MAX_CHARS) return text;
  const code = text.charCodeAt(INPUT_MAX_CHARS - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? INPUT_MAX_CHARS - 1 : INPUT_MAX_CHARS);
}

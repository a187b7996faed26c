import { createRedactor, MIN_SECRET_LENGTH, type Redactor } from './redact/index';

/**
 * Redaction for a process's own log lines (control plane and runner): the well-known token formats
 * always, plus every secret value this process has handled (registered by whoever decrypts or
 * receives them). Logs are written a line at a time, so whole-write redaction is enough here; the
 * terminal stream uses the chunk-safe stream redactor instead.
 */

/** More distinct values than this are not remembered (the oldest are forgotten first). */
const MAX_REMEMBERED = 1_000;

export class LogRedaction {
  private readonly values = new Set<string>();
  private redactor: Redactor = createRedactor([]);

  /** Secret values from now on masked in this process's logs. */
  remember(values: Iterable<string>): void {
    let changed = false;
    for (const v of values) {
      if (v.length < MIN_SECRET_LENGTH || this.values.has(v)) continue;
      this.values.add(v);
      changed = true;
      if (this.values.size > MAX_REMEMBERED) this.values.delete(this.values.values().next().value as string);
    }
    if (changed) this.redactor = createRedactor([...this.values]);
  }

  redact(text: string): string {
    return text.length === 0 ? text : this.redactor.redact(text);
  }

  /**
   * Routes every write of `stream` through redact(). Strings and Buffers (decoded as UTF-8) are
   * both handled; the original callback/encoding arguments are passed on.
   */
  install(stream: WritableText): void {
    const original = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    const patched = (chunk: unknown, ...rest: unknown[]): boolean => {
      if (typeof chunk === 'string') return original(this.redact(chunk), ...rest);
      if (chunk instanceof Uint8Array) return original(this.redact(UTF8.decode(chunk)), ...rest);
      return original(chunk, ...rest);
    };
    stream.write = patched as typeof stream.write;
  }
}

/** What install() needs of a stream (process.stdout, process.stderr): a write method to wrap. */
export interface WritableText {
  write: (chunk: never, ...rest: never[]) => boolean;
}

/** Malformed bytes become U+FFFD, as Buffer#toString('utf8') does. */
const UTF8 = new TextDecoder('utf-8');

/** The one instance of this process. */
export const logRedaction = new LogRedaction();

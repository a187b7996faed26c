import { fail, type ErrorCode, type Result } from '../protocol';
import type { Logger } from './log';

/**
 * An expected failure whose message is fit for the person who caused it (bad source, missing
 * branch, git refusing). Anything else is a bug and leaves the runner as INTERNAL, without detail.
 */
export class RunnerError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RunnerError';
  }
}

export const INTERNAL_MESSAGE = 'internal runner error (details are in the runner log)';

/** Turns anything caught into an ack; unknown errors are logged with their stack and hidden. */
export function failureFrom(err: unknown, log: Logger, context: string): Result<never> {
  if (err instanceof RunnerError) return fail(err.code, err.message);
  log.error(`${context} failed`, err);
  return fail('INTERNAL', INTERNAL_MESSAGE);
}

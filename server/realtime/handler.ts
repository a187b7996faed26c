import type { z } from 'zod';
import { fail, ok, parseInput, type Result } from '../../protocol';
import { isAppError } from '../services/errors';
import { shownMessage } from '../services/viewer-text';

/** Turn anything thrown into an answer: known errors keep their message, unknown ones are logged. */
export function toFailure(err: unknown, where: string): Result<never> {
  if (isAppError(err)) return fail(err.code, shownMessage(err.code, err.userMessage));
  console.error(`[server] ${where} failed:`, err);
  return fail('INTERNAL', 'Something went wrong on the server; the error was logged.');
}

/**
 * Every socket handler has the same steps: validate → on failure answer a structured error →
 * do the work → ack. Nothing is thrown across the socket, and a missing ack callback is tolerated.
 */
export function handle<S extends z.ZodType, T>(
  where: string,
  schema: S,
  fn: (body: z.infer<S>) => Promise<T> | T,
): (body: unknown, ack?: unknown) => Promise<void> {
  return async (body, ack) => {
    const reply = typeof ack === 'function' ? (ack as (r: Result<T>) => void) : () => undefined;
    const parsed = parseInput(schema, body);
    if (!parsed.ok) return reply(parsed);
    try {
      reply(ok(await fn(parsed.data)));
    } catch (err) {
      reply(toFailure(err, where));
    }
  };
}

import { z } from 'zod';
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
 * Each handler's schema with zod's ahead-of-time compiled fast path (`z.compile`), made once per
 * schema however many sockets register it. A valid message takes generated code for exactly that
 * schema; an invalid one falls back to the regular parser, so errors read the same. Issue 17: the
 * runner's frames (several per MB of output) and the viewers' acks went through zod's generic
 * parser, whose megamorphic lookups were ~7 % of the main thread's samples in a 64 MB flood.
 */
const compiled = new WeakMap<z.ZodType, z.ZodType>();
function fastPath<S extends z.ZodType>(schema: S): S {
  let fast = compiled.get(schema);
  if (!fast) compiled.set(schema, (fast = z.compile(schema)));
  return fast as S;
}

/**
 * Every socket handler has the same steps: validate → on failure answer a structured error →
 * do the work → ack. Nothing is thrown across the socket, and a missing ack callback is tolerated.
 *
 * The returned handler is not an async function on purpose: a suspended async function keeps its
 * arguments and locals reachable until it returns, even those it no longer reads, and a runner's
 * frame (its bytes, and the ~50 KB of output decoded from them) would stay alive for the whole
 * ingest — redaction, the live fan-out and the batch's store round trip — to be copied by every
 * scavenge and promoted to the old generation (issue 17). Only `answer` waits, holding the work.
 */
export function handle<S extends z.ZodType, T>(
  where: string,
  schema: S,
  fn: (body: z.infer<S>) => Promise<T> | T,
): (body: unknown, ack?: unknown) => Promise<void> {
  const checked = fastPath(schema);
  return (body, ack) => {
    const reply = typeof ack === 'function' ? (ack as (r: Result<T>) => void) : () => undefined;
    const parsed = parseInput(checked, body);
    if (!parsed.ok) {
      reply(parsed);
      return Promise.resolve();
    }
    return answer(where, reply, started(fn, parsed.data));
  };
}

/** `fn(input)` as a promise, a synchronous throw included. */
function started<I, T>(fn: (input: I) => Promise<T> | T, input: I): Promise<T> {
  try {
    return Promise.resolve(fn(input));
  } catch (err) {
    return Promise.reject(err);
  }
}

async function answer<T>(where: string, reply: (r: Result<T>) => void, work: Promise<T>): Promise<void> {
  try {
    reply(ok(await work));
  } catch (err) {
    reply(toFailure(err, where));
  }
}

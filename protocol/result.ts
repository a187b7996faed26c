import { z } from 'zod';

/** Error codes shared by REST answers and socket acks. */
export const ErrorCodeSchema = z.enum([
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'NO_RUNNER',
  'RUNNER_ERROR',
  'SETUP_REQUIRED',
  /** A plan limit (concurrency, monthly cap, allowlist) refused it; the message says which and what to do. */
  'PLAN_LIMIT',
  /** Too many attempts (logins, socket events): the message and Retry-After say when to try again. */
  'RATE_LIMITED',
  /** A request body over the route's size limit, refused before it was parsed. */
  'PAYLOAD_TOO_LARGE',
  'INTERNAL',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

export const ApiErrorSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  /** Field by field, when the request failed a schema (e.g. run parameters): path "" is the whole object. */
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;

/** Every socket ack and REST body: nothing is thrown across a process boundary. */
export type Result<T> = { ok: true; data: T } | { ok: false; error: ApiError };
export type Ack<T> = (result: Result<T>) => void;

export const ok = <T>(data: T): Result<T> => ({ ok: true, data });
export const fail = (code: ErrorCode, message: string): Result<never> => ({ ok: false, error: { code, message } });

/** HTTP status for each error code (one table, used by every route handler). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  NO_RUNNER: 503,
  RUNNER_ERROR: 502,
  SETUP_REQUIRED: 409,
  PLAN_LIMIT: 429,
  RATE_LIMITED: 429,
  PAYLOAD_TOO_LARGE: 413,
  INTERNAL: 500,
};

/** A readable message from a failed zod parse: "field: problem; field: problem". */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => {
      // A bad record key says only "Invalid key in record"; the key schema's own message says why.
      const nested = i.code === 'invalid_key' ? i.issues[0]?.message : undefined;
      const message = nested ? `${i.message}: ${nested}` : i.message;
      return i.path.length ? `${i.path.join('.')}: ${message}` : message;
    })
    .join('; ');
}

/** safeParse turned into a Result, for arrivals from sockets. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): Result<z.infer<S>> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return ok(parsed.data);
  return fail('BAD_REQUEST', `Invalid message: ${describeZodError(parsed.error)}`);
}

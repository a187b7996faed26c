import type { ErrorCode } from '../../protocol';

/** The one error type services throw: a code, a safe message for users, optional internal detail. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly userMessage: string,
    readonly detail?: unknown,
  ) {
    super(userMessage);
    this.name = 'AppError';
  }
}

/** A 400 whose body also lists what was wrong, field by field (JSON Schema errors of run parameters). */
export function invalidWithIssues(message: string, issues: Array<{ path: string; message: string }>): AppError {
  return Object.assign(new AppError('BAD_REQUEST', message), { issues });
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} was not found.`);
export const forbidden = (message = 'You do not have permission to do that.') => new AppError('FORBIDDEN', message);

/**
 * Next.js bundles route handlers apart from the custom server, so one AppError class can exist
 * twice; recognise it by shape, not by `instanceof`.
 */
export function isAppError(err: unknown): err is AppError {
  return err instanceof Error && err.name === 'AppError' && typeof (err as AppError).code === 'string';
}

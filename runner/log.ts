/** One line per notable thing, on stderr, so stdout stays free for anything a parent pipes. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /** `detail` is for the operator's eyes (stack traces); it never crosses the socket. */
  error(message: string, detail?: unknown): void;
}

const PREFIX = '[runner]';

function describeDetail(detail: unknown): string {
  if (detail === undefined) return '';
  if (detail instanceof Error) return ` — ${detail.stack ?? detail.message}`;
  return ` — ${String(detail)}`;
}

export function createStderrLogger(write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  return {
    info: (message) => write(`${PREFIX} ${message}\n`),
    warn: (message) => write(`${PREFIX} warning: ${message}\n`),
    error: (message, detail) => write(`${PREFIX} error: ${message}${describeDetail(detail)}\n`),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** A readable one-liner from anything caught. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

import { logRedaction } from '../common/log-redaction';

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

/** Every line is redacted first: token formats and the secret values of this runner's sessions. */
export function createStderrLogger(write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const out = (line: string) => write(logRedaction.redact(line));
  return {
    info: (message) => out(`${PREFIX} ${message}\n`),
    warn: (message) => out(`${PREFIX} warning: ${message}\n`),
    error: (message, detail) => out(`${PREFIX} error: ${message}${describeDetail(detail)}\n`),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** A readable one-liner from anything caught: the project's one helper (common/error-text.ts). */
export { errorText as errorMessage } from '../common/error-text';

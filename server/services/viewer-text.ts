/**
 * What people see of a runner's or git's error: the reason, without the control plane's or the
 * runner's internals — no URL (it may carry credentials or an internal host), no host name or
 * address git tried, no absolute path on a server. The full text stays in the server's log.
 */
export function withoutServerDetail(text: string): string {
  return (
    text
      // URLs first (their paths are not server paths), then scp-like git@host:path.
      .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]+/gi, '<repository URL>')
      .replace(/\b[\w.-]+@[\w.-]+:[\w./~-]+/g, '<repository URL>')
      // git/curl/ssh name the host they could not reach.
      .replace(/\b(resolve host:?|connect to(?: host)?|connection to|host key for)\s+(?!<)[^\s',;]+/gi, '$1 <host>')
      .replace(/\[?\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\]?(?![\w:])/gi, (m) => (/[0-9a-f]{1,4}:[0-9a-f]{0,4}:/i.test(m) ? '<address>' : m))
      .replace(/\b\d{1,3}(?:\.\d{1,3}){3}\b/g, '<address>')
      // Absolute paths keep only their last segment: "…/sess_abc" still says which thing.
      .replace(/(^|[\s'"`(=:])\/(?:[^\s'"`/()]+\/)*([^\s'"`/()]+)\/?/g, (_m, pre: string, last: string) => `${pre}…/${last}`)
  );
}

/** A runner's words (RUNNER_ERROR, NO_RUNNER) reach people without internal hosts or server paths; the rest are ours. */
export function shownMessage(code: string, message: string): string {
  return code === 'RUNNER_ERROR' || code === 'NO_RUNNER' ? withoutServerDetail(message) : message;
}

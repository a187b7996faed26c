/** One problem an offline check found; printed as `path:line: severity: message` for the findings parser. */
export interface CheckFinding {
  path: string;
  line: number | null;
  severity: 'error' | 'warning';
  message: string;
}

/** The 1-based line of the first occurrence of `needle`, or null. */
export function lineOf(text: string, needle: string): number | null {
  const i = text.indexOf(needle);
  if (i < 0) return null;
  let n = 1;
  for (let k = 0; k < i; k++) if (text.charCodeAt(k) === 10) n++;
  return n;
}

export function formatFinding(f: CheckFinding): string {
  return `${f.path}${f.line ? `:${f.line}` : ''}: ${f.severity}: ${f.message}`;
}

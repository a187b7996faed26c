/** commonmark-spec (dev, tests only) ships no types: the spec's text and its examples. */
declare module 'commonmark-spec' {
  export const text: string;
  export const tests: Array<{ markdown: string; html: string; section: string; number: number }>;
}

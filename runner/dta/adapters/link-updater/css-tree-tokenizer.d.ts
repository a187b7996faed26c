/**
 * css-tree's CSS Syntax Level 3 tokenizer (its `css-tree/tokenizer` export) ships no typings of
 * its own: the part parsers.ts uses. Token types are CSS Syntax's, numbered as in its types.js.
 */
declare module 'css-tree/tokenizer' {
  export function tokenize(source: string, onToken: (type: number, start: number, end: number) => void): void;
  export const Function: number;
  export const AtKeyword: number;
  export const String: number;
  export const Url: number;
  export const WhiteSpace: number;
  export const Comment: number;
}

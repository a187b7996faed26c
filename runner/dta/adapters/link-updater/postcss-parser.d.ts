/**
 * postcss's own Parser (a public path of its package's exports, the class postcss-scss and
 * postcss-safe-parser extend) ships no typings: the part parsers.ts uses.
 */
declare module 'postcss/lib/parser' {
  import type { Root } from 'postcss';
  import type Input from 'postcss/lib/input';

  export default class Parser {
    constructor(input: Input);
    root: Root;
    parse(): void;
    getPosition(offset: number): { offset: number; line: number; column: number };
  }
}

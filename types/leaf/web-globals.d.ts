// The web-platform globals the leaves use, which Node and every browser both provide. Anything
// else (Node's `Buffer`, `process`, `fs`; the DOM's `document`, `window`) does not type-check in
// protocol/ and common/.
declare function btoa(data: string): string;
declare function atob(data: string): string;
declare class TextEncoder {
  encode(input?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  decode(input?: ArrayBufferView | ArrayBuffer, options?: { stream?: boolean }): string;
}

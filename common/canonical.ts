import { blake3 } from '@noble/hashes/blake3.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JSON Canonicalization Scheme) through the `canonicalize` package, and BLAKE3 content
 * hashes through `@noble/hashes`: the planner's byte-identical plans and the work items' receipts
 * hash the same way on the control plane and on the runner.
 */

/** The canonical JSON text of a value (sorted keys, RFC 8785 numbers, no whitespace). */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  // undefined only for values JSON cannot hold (a function, a bare undefined): a caller's bug.
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/** BLAKE3 of bytes or UTF-8 text, hex. */
export function blake3Hex(data: Uint8Array | string): string {
  return bytesToHex(blake3(typeof data === 'string' ? new TextEncoder().encode(data) : data));
}

/** The hash of a JSON value: BLAKE3 of its canonical form (the spec's `content_hash`). */
export function contentHash(value: unknown): string {
  return blake3Hex(canonicalJson(value));
}

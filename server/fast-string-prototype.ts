/**
 * Keeps V8's `String.prototype` in fast mode in this process (issue 17).
 *
 * V8 (Node 20) switches `String.prototype` to dictionary mode the first time an object is given it
 * as its prototype, e.g. by `class VerbatimString extends String` in ioredis, which the control
 * plane loads for its Redis options whether Redis is set or not. From then on, optimised code
 * looks string methods up the slow way: every `s.charCodeAt(i)` of the redaction scan
 * (common/redact/scan.ts), the control plane's largest cost per MB of terminal output, ran ~2.5×
 * slower (9.5 against 3.7 ms/MB on numbered lines, the same redactor before and after importing
 * ioredis). V8 makes a prototype fast again when a property load through an object inheriting
 * from it is cached, and then keeps it fast for any later subclass; this does such loads.
 *
 * Call it at start-up, before hot code is optimised (code optimised while the prototype was slow
 * stays slow). A worker thread is its own V8 isolate, with its own `String.prototype`.
 */

/** Calls of the load: a function gets its caches only after its first calls (lazy feedback allocation; 10 suffice today). */
const LOADS = 1_000;

export function keepStringPrototypeFast(): void {
  const heir = Object.create(String.prototype) as Record<string, unknown>;
  for (let i = 0; i < LOADS; i++) readMissing(heir);
}

function readMissing(o: Record<string, unknown>): unknown {
  return o.agentVillageNoSuchProperty;
}

import type { RunnerEvent } from '../../protocol';

/**
 * The UTF-8 a runner sent a TERMINAL_CHUNK's text in (a runner frame carries output as bytes,
 * protocol/runner-frame.ts), kept beside the event object for as long as that object lives
 * (issue 17). The control plane's redaction hands a chunk on as the same object only when it let
 * out exactly the runner's text (redaction.ts), so bytes found here are still that text: viewers
 * are sent them instead of the text encoded again. Kept by object rather than passed as a second
 * array, so the ingest's wrappers (notifications, pruning) carry it without knowing of it.
 */
const sent = new WeakMap<RunnerEvent, Uint8Array>();

/** Remembers each chunk's bytes; `utf8[i]` belongs to `events[i]` (undefined: carried as text). */
export function keepRunnerUtf8(events: readonly RunnerEvent[], utf8: ReadonlyArray<Uint8Array | undefined>): void {
  for (let i = 0; i < events.length; i++) {
    const bytes = utf8[i];
    if (bytes) sent.set(events[i]!, bytes);
  }
}

/** The bytes this very chunk object arrived in, if it came in a frame and its text is unchanged. */
export const runnerUtf8 = (e: RunnerEvent): Uint8Array | undefined => sent.get(e);

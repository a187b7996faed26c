/**
 * The lines a terminal view prints for events that are not output (a lost stretch, the end of a
 * session). The browser and the control plane's headless mirror print the same text, so a screen
 * painted from a snapshot is the screen a live viewer has.
 */
export interface NoteEvent {
  type: string;
  payload?: Record<string, unknown>;
}

export function terminalNote(e: NoteEvent): string | null {
  if (e.type === 'OUTPUT_GAP') return `\r\n\x1b[33m[output lost: ${String(e.payload?.reason ?? 'the runner was down')}]\x1b[0m\r\n`;
  if (e.type === 'SESSION_STATE_CHANGED') {
    const to = String(e.payload?.to ?? '');
    if (to === 'COMPLETED' || to === 'FAILED') {
      return `\r\n\x1b[2m[session ${to === 'COMPLETED' ? 'finished' : 'failed'}: ${String(e.payload?.reason ?? '')}]\x1b[0m\r\n`;
    }
  }
  return null;
}

/** What an event adds to the terminal: its output, a note, or nothing. */
export function terminalText(e: NoteEvent & { data?: string }): string | null {
  if (e.type === 'TERMINAL_CHUNK') return e.data ?? null;
  return terminalNote(e);
}

import { writeFileSync } from 'node:fs';

/**
 * Names the calling thread in the OS (`top -H`, bench:live's per-thread time-line), so the control
 * plane's worker threads are told apart rather than all shown as "node". Linux keeps at most 15
 * characters. Elsewhere (no /proc) it does nothing: the name is only a help.
 */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // Not Linux.
  }
}

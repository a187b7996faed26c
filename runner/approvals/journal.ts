import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { RunnerEventBody } from '../../protocol';
import type { Logger } from '../log';

/**
 * Which approvals are pending, on disk (`<data-dir>/approvals/<session_id>.json`), written
 * synchronously before APPROVAL_REQUESTED is spooled. When the runner dies while one waits, the
 * shim that asked died with the session's PTY, so the action never ran; the next start turns
 * every leftover entry into APPROVAL_RESOLVED deny 'runner_restarted' (before the spool's FAILED
 * for that session) and deletes the file. Fail closed.
 */

const JournalFileSchema = z.object({ pending: z.array(z.string().min(1).max(100)).max(10_000) });
const SESSION_FILE = /^(sess_[A-Za-z0-9_-]+)\.json$/;

export class ApprovalJournal {
  private readonly open = new Map<string, Set<string>>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {
    fs.mkdirSync(dir, { recursive: true });
  }

  add(sessionId: string, approvalId: string): void {
    const set = this.open.get(sessionId) ?? new Set<string>();
    set.add(approvalId);
    this.open.set(sessionId, set);
    this.write(sessionId, set);
  }

  remove(sessionId: string, approvalId: string): void {
    const set = this.open.get(sessionId);
    if (!set?.delete(approvalId)) return;
    this.write(sessionId, set);
  }

  clear(sessionId: string): void {
    this.open.delete(sessionId);
    fs.rmSync(this.file(sessionId), { force: true });
  }

  /**
   * Start-up: what the previous runner left pending, per session, as the events to record; the
   * files are deleted. Call before the spool records the sessions' end.
   */
  takeLeftovers(): Map<string, RunnerEventBody[]> {
    const out = new Map<string, RunnerEventBody[]>();
    for (const name of fs.readdirSync(this.dir)) {
      const m = SESSION_FILE.exec(name);
      const file = path.join(this.dir, name);
      if (!m) {
        if (name.endsWith('.tmp')) fs.rmSync(file, { force: true });
        continue;
      }
      try {
        const parsed = JournalFileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
        if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid');
        if (parsed.data.pending.length) {
          out.set(
            m[1],
            parsed.data.pending.map((approval_id) => ({
              type: 'APPROVAL_RESOLVED',
              approval_id,
              decision: 'deny',
              reason: 'runner_restarted',
              note: 'the runner restarted while this approval was pending; the action was not performed',
            })),
          );
        }
      } catch (err) {
        this.log.warn(`approval journal ${name} unreadable; its approvals stay denied (the actions died with the runner): ${err instanceof Error ? err.message : String(err)}`);
      }
      fs.rmSync(file, { force: true });
    }
    return out;
  }

  private file(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.json`);
  }

  private write(sessionId: string, set: Set<string>): void {
    if (set.size === 0) {
      this.open.delete(sessionId);
      fs.rmSync(this.file(sessionId), { force: true });
      return;
    }
    const tmp = `${this.file(sessionId)}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ pending: [...set] }));
    fs.renameSync(tmp, this.file(sessionId));
  }
}

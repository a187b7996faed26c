import { EventEmitter } from 'node:events';

/**
 * Changes to who may do what, announced to the realtime layer so an open socket follows them at
 * once: a removed member's sockets leave the org, ended logins drop their sockets. Sockets also
 * re-read their principal on every event, so this is about rooms, not about the checks.
 */
export type MemberChange =
  | { kind: 'role_changed'; userId: string; orgId: string }
  | { kind: 'removed'; userId: string; orgId: string }
  | { kind: 'sessions_ended'; userId: string }
  /** One login of the user ended (logout); other logins stay. */
  | { kind: 'logged_out'; userId: string }
  | { kind: 'org_switched'; userId: string };

export class MemberEvents {
  private readonly emitter = new EventEmitter();

  emit(change: MemberChange): void {
    this.emitter.emit('change', change);
  }

  on(listener: (change: MemberChange) => void): () => void {
    this.emitter.on('change', listener);
    return () => this.emitter.off('change', listener);
  }
}

import { EventEmitter } from 'node:events';
import type { ClusterMemberChange } from '../../protocol';

/**
 * Changes to who may do what, announced to the realtime layer so an open socket follows them at
 * once: a removed member's sockets leave the org, ended logins drop their sockets. Sockets also
 * re-read their principal on every event, so this is about rooms, not about the checks. With
 * several nodes, each change is also announced to the others (cluster-relay.ts relayMemberChanges).
 * Kinds: role_changed, removed, sessions_ended, logged_out (one login ended), org_switched.
 */
export type MemberChange = ClusterMemberChange;

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

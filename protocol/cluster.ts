import { z } from 'zod';

/**
 * Messages between control-plane nodes (through the Socket.IO adapter: Redis or PostgreSQL).
 * They come from our own nodes, never from clients, and are still validated on arrival.
 */

/** A change to who may do what, made through one node, applied to every node's open sockets. */
export const ClusterMemberChangeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('role_changed'), userId: z.string().min(1), orgId: z.string().min(1) }),
  z.object({ kind: z.literal('removed'), userId: z.string().min(1), orgId: z.string().min(1) }),
  z.object({ kind: z.literal('sessions_ended'), userId: z.string().min(1) }),
  z.object({ kind: z.literal('logged_out'), userId: z.string().min(1) }),
  z.object({ kind: z.literal('org_switched'), userId: z.string().min(1) }),
]);
export type ClusterMemberChange = z.infer<typeof ClusterMemberChangeSchema>;

import { z } from 'zod';

/**
 * What an approved action would touch, measured by the runner before the approver decides
 * (issue 19 item 3): files and lines for a merge or push, packages and their licences for an
 * install, hosts for a deploy.
 */
export const BlastRadiusSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('files'),
    files: z.array(z.object({ path: z.string().max(4096), added: z.number().int().nonnegative(), deleted: z.number().int().nonnegative() })).max(500),
    total_files: z.number().int().nonnegative(),
    lines_added: z.number().int().nonnegative(),
    lines_deleted: z.number().int().nonnegative(),
  }),
  z.object({
    kind: z.literal('packages'),
    /** licence null: nothing offline (lockfile, node_modules) says. */
    packages: z.array(z.object({ name: z.string().max(300), version: z.string().max(100).nullable(), license: z.string().max(200).nullable() })).max(500),
  }),
  z.object({ kind: z.literal('hosts'), hosts: z.array(z.string().max(300)).max(100) }),
]);
export type BlastRadius = z.infer<typeof BlastRadiusSchema>;

import type { Db } from '../db';
import { newId } from './ids';

/** The installation's org: created on first start so the attached runner and demo repo have a home. */
export async function ensureDefaultOrg(db: Db): Promise<{ id: string; name: string }> {
  const existing = await db.org.findFirst({ orderBy: { createdAt: 'asc' } });
  if (existing) return existing;
  return db.org.create({ data: { id: newId('org'), name: 'My Village' } });
}

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerEventSchema, type RunnerEvent } from '../../protocol';
import { keepRunnerUtf8 } from '../services/runner-utf8';
import { openServiceDb, type ServiceDb } from './service-db';

/**
 * The bytes a runner's frame carried reach the live fan-out through the real ingest (its
 * redaction, notification and pruning wrappers), for exactly the chunks the control plane's
 * redaction left as they were: viewers are sent those bytes, not the text encoded again.
 */
describe('a frame’s bytes through the ingest', () => {
  let env: ServiceDb;
  const SESSION = 'sess_utf8bytes1';
  const sent: Array<{ seqs: number[]; utf8?: ReadonlyMap<number, Uint8Array> }> = [];

  beforeEach(async () => {
    env = await openServiceDb({ defaultPlan: 'enterprise' });
    sent.length = 0;
    env.services.ports.broadcast!.sessionEvents = (_id, events, utf8) => void sent.push({ seqs: events.map((e) => e.seq), utf8 });
    await env.db.session.create({
      data: { id: SESSION, orgId: env.orgId, repoId: 'repo_test01', runnerId: env.runner.id, createdById: env.admin.userId, provider: 'shell', roomPath: '', title: 't', state: 'RUNNING', reason: 'test' },
    });
  });
  afterEach(() => env.close());

  const chunk = (seq: number, data: string): RunnerEvent =>
    RunnerEventSchema.parse({ session_id: SESSION, org_id: env.orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq, type: 'TERMINAL_CHUNK', data });

  it('hands viewers the runner’s bytes of an unchanged chunk, and none for a masked one', async () => {
    const token = `ghp_${'k9Lm'.repeat(9)}`;
    const events = [chunk(1, 'plain é\r\n'), chunk(2, `export GH=${token}\r\n`), chunk(3, 'after\r\n')];
    const utf8 = events.map((e) => Buffer.from((e as { data: string }).data));
    keepRunnerUtf8(events, utf8);
    await env.services.events.ingest(env.runner, events);
    expect(sent.map((s) => s.seqs)).toEqual([[1, 2, 3]]);
    const given = sent[0]!.utf8!;
    expect(given.get(1)).toBe(utf8[0]);
    expect(given.get(3)).toBe(utf8[2]);
    expect(given.has(2)).toBe(false);
  });
});

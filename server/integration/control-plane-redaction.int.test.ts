import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDACTED } from '../../common/redact';
import { RunnerEventSchema, type RunnerEvent, type WireEvent } from '../../protocol';
import { openServiceDb, type ServiceDb } from './service-db';
import { storedEvents } from '../services/terminal/stored-output';

/**
 * The control plane does not trust a runner (issue 10): a runner that sends secrets unmasked —
 * cut across chunks and batches, in other events' strings — still gets nothing readable stored
 * or broadcast, and the session's receipt says what the control plane masked.
 */
describe('control-plane re-redaction at ingest', () => {
  let env: ServiceDb;
  const broadcast: WireEvent[] = [];
  const SESSION = 'sess_redact01';
  const VALUE = 'Corr3ct-Horse/Battery+Staple';
  const TOKEN = `ghp_${'k9Lm'.repeat(9)}`;

  beforeEach(async () => {
    env = await openServiceDb({ defaultPlan: 'enterprise' });
    broadcast.length = 0;
    env.services.ports.broadcast!.sessionEvents = (_id, events) => void broadcast.push(...events);
    await env.services.secrets.set(env.admin, 'DB_PASSWORD', VALUE);
    await env.db.session.create({
      data: { id: SESSION, orgId: env.orgId, repoId: 'repo_test01', runnerId: env.runner.id, createdById: env.admin.userId, provider: 'shell', roomPath: '', title: 't', state: 'RUNNING', reason: 'test' },
    });
  });
  afterEach(() => env.close());

  const ev = (seq: number, body: Record<string, unknown>): RunnerEvent =>
    RunnerEventSchema.parse({ session_id: SESSION, org_id: env.orgId, repo_id: 'repo_test01', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq, ...body });

  it('masks what a runner left unmasked, across chunks and batches, before storing or broadcasting', async () => {
    const { services, runner, db } = env;
    const b64 = Buffer.from(`user:${VALUE}`).toString('base64');
    await services.events.ingest(runner, [
      ev(1, { type: 'TERMINAL_CHUNK', data: `$ export GH=${TOKEN.slice(0, 10)}` }),
      ev(2, { type: 'TERMINAL_CHUNK', data: `${TOKEN.slice(10)}\r\n\x1b[7m${VALUE.slice(0, 7)}` }),
    ]);
    // A resend of an event already stored must not feed the stream twice.
    await services.events.ingest(runner, [ev(2, { type: 'TERMINAL_CHUNK', data: `${TOKEN.slice(10)}\r\n\x1b[7m${VALUE.slice(0, 7)}` })]);
    await services.events.ingest(runner, [
      ev(3, { type: 'TERMINAL_CHUNK', data: `${VALUE.slice(7)}\x1b[27m ${b64}\r\n$ ` }),
      ev(4, { type: 'POLICY_BLOCKED', command: `curl -u me:${VALUE} https://x`, rule: `denylist ${TOKEN}`, detail: `blocked ${TOKEN}`, outcome: 'prevented' }),
      ev(5, { type: 'SESSION_STATE_CHANGED', from: 'RUNNING', to: 'COMPLETED', reason: `exit; last was ${VALUE}` }),
    ]);

    // Stored in either form: event rows, and terminal output folded into segments (migration 024).
    const rows = await db.sessionEvent.findMany({ where: { sessionId: SESSION }, orderBy: { seq: 'asc' } });
    const segments = await db.terminalSegment.findMany({ where: { sessionId: SESSION } });
    const stored = [...rows.map((r) => r.payload), ...segments.map((x) => x.data)].join('\n');
    const wire: WireEvent[] = [];
    for await (const page of storedEvents(db, SESSION, 0)) wire.push(...page);
    const sent = JSON.stringify(broadcast);
    for (const surface of [stored, sent]) {
      for (const secret of [VALUE, TOKEN.slice(4, 20), b64.slice(8, 30), VALUE.slice(7)]) expect(surface).not.toContain(secret);
    }
    const text = wire.filter((e) => e.type === 'TERMINAL_CHUNK').map((e) => e.data ?? '').join('');
    // The token's label stays, the colours stay, and of the base64 only what encodes "user:" is left.
    expect(text).toBe(`$ export GH=ghp_${REDACTED}\r\n\x1b[7m${REDACTED}\x1b[27m dXNlcjp${REDACTED}\r\n$ `);

    await expect.poll(async () => (await services.redaction.receipt(env.admin, SESSION)).length).toBeGreaterThan(0);
    const receipt = await services.redaction.receipt(env.admin, SESSION);
    expect(receipt).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: 'control-plane', rule: 'org-secret', secret_name: 'DB_PASSWORD' }),
        expect.objectContaining({ source: 'control-plane', rule: 'github-token', first_seq: 2 }),
      ]),
    );
    expect(JSON.stringify(receipt)).not.toContain(VALUE);
    const audit = await services.audit.list(env.orgId, { action: 'session.redaction' });
    expect(audit.map((a) => a.target)).toContain(SESSION);
  });

  it("a receipt of another org's session is not found", async () => {
    await expect(env.services.redaction.receipt({ ...env.admin, orgId: 'org_other' }, SESSION)).rejects.toThrow(/not found|That session/i);
  });
});

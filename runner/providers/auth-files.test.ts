import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCommand, makeTempDir, removeTempDir } from '../testing/fixtures';
import { authFileSecrets, SharedAuthFile } from './auth-files';
import { claudeProvider } from './claude';
import { codexProvider } from './codex';
import { geminiProvider } from './gemini';
import type { ProviderLaunchContext } from './types';

describe('shared provider auth files (--provider-auth)', () => {
  let tmp: string;
  let runnerHome: string;
  let ctx: ProviderLaunchContext;
  beforeEach(async () => {
    tmp = await makeTempDir('auth-files');
    runnerHome = path.join(tmp, 'runner-home');
    const home = path.join(tmp, 'session-home');
    fs.mkdirSync(home, { recursive: true });
    const write = (rel: string, body: unknown) => {
      fs.mkdirSync(path.dirname(path.join(runnerHome, rel)), { recursive: true });
      fs.writeFileSync(path.join(runnerHome, rel), JSON.stringify(body));
    };
    // Shapes as the CLIs write them (values made up).
    write('.claude/.credentials.json', { claudeAiOauth: { accessToken: 'sk-ant-oat01-aaaaaaaaaaaa', refreshToken: 'sk-ant-ort01-bbbbbbbbbbbb', expiresAt: 1, scopes: ['user:inference'] } });
    write('.codex/auth.json', { OPENAI_API_KEY: null, tokens: { id_token: 'eyJhbGciOi.ccccccccccc', access_token: 'eyJhbGciOi.dddddddddddd', refresh_token: 'rt_eeeeeeeeeeee', account_id: 'acct-1' }, last_refresh: '2026-11-01T00:00:00Z' });
    write('.gemini/oauth_creds.json', { access_token: 'ya29.ffffffffffff', refresh_token: '1//gggggggggggg', token_type: 'Bearer', expiry_date: 1 });
    const command = createCommand({ repo_source: '/x', task: { title: 'x' } });
    ctx = { session_id: command.session_id, home, cwd: path.join(tmp, 'wt'), worktree_path: path.join(tmp, 'wt'), env: { PATH: '/usr/bin', HOME: home }, command };
  });
  afterEach(async () => {
    await removeTempDir(tmp);
  });

  it('finds the credential values in each file, and nothing shorter or unrelated', () => {
    expect(new SharedAuthFile('claude', runnerHome).secrets().sort()).toEqual(['sk-ant-oat01-aaaaaaaaaaaa', 'sk-ant-ort01-bbbbbbbbbbbb']);
    expect(new SharedAuthFile('codex', runnerHome).secrets().sort()).toEqual(['eyJhbGciOi.ccccccccccc', 'eyJhbGciOi.dddddddddddd', 'rt_eeeeeeeeeeee']);
    expect(new SharedAuthFile('gemini', runnerHome).secrets().sort()).toEqual(['1//gggggggggggg', 'ya29.ffffffffffff']);
    expect(authFileSecrets('not json but a long token value')).toEqual(['not json but a long token value']);
    expect(new SharedAuthFile('codex', path.join(tmp, 'nobody')).secrets()).toEqual([]);
  });

  it('only opted-in providers copy their file, read-only, into the session home; an org API key wins over it', async () => {
    const opts = { runnerHome, providerAuth: ['claude', 'codex', 'gemini'] as const };
    const claude = claudeProvider({ PATH: '' }, { ...opts, providerAuth: [...opts.providerAuth] });
    const codex = codexProvider({ PATH: '' }, { ...opts, providerAuth: [...opts.providerAuth] });
    const gemini = geminiProvider({ PATH: '' }, { ...opts, providerAuth: [...opts.providerAuth] });
    expect([claude.sharesAuthFile, codex.sharesAuthFile, gemini.sharesAuthFile]).toEqual([true, true, true]);
    expect(codexProvider({ PATH: '' }, { runnerHome, providerAuth: ['claude'] }).sharesAuthFile).toBe(false);
    for (const p of [claude, codex, gemini]) await p.prepare?.(ctx);
    for (const rel of ['.claude/.credentials.json', '.codex/auth.json', '.gemini/oauth_creds.json']) {
      const file = path.join(ctx.home, rel);
      expect(fs.statSync(file).mode & 0o777, rel).toBe(0o400);
      expect(fs.readFileSync(file, 'utf8')).toBe(fs.readFileSync(path.join(runnerHome, rel), 'utf8'));
    }
    expect(JSON.parse(fs.readFileSync(path.join(ctx.home, '.gemini', 'settings.json'), 'utf8')).security.auth).toEqual({ selectedType: 'oauth-personal' });

    // With the org's key, the key is used and the runner user's file stays home.
    const home2 = path.join(tmp, 'session-home-2');
    fs.mkdirSync(home2);
    const keyed = { ...ctx, home: home2, secrets: { OPENAI_API_KEY: 'sk-proj-123456789012' } };
    await codex.prepare?.(keyed);
    expect(fs.existsSync(path.join(home2, '.codex', 'auth.json'))).toBe(false);
  });
});

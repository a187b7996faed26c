import { defineConfig } from '@playwright/test';
import { CONTROL_PLANE_ARGS } from './server/heap-growth';

const PORT = Number(process.env.E2E_PORT ?? 3123);
const DATA_DIR = process.env.E2E_DATA_DIR ?? `/tmp/agent-village-e2e-${process.pid}`;
// Workers (other processes) evaluate this file again: they must find the same data directory.
process.env.E2E_DATA_DIR = DATA_DIR;
// A root server runs its runner as another user: specs that read the runner's clones with git must
// tell it those repositories are safe (git refuses other users' repositories).
Object.assign(process.env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' });

/** End-to-end: the real server (built Next.js app), its attached runner, Debian's Chromium. */
export default defineConfig({
  testDir: 'e2e',
  // The setup project creates the first admin through the setup page; every other spec logs in.
  projects: [
    { name: 'setup', testMatch: /setup\.spec\.ts$/ },
    { name: 'app', testMatch: /\.spec\.ts$/, testIgnore: [/setup\.spec\.ts$/, /multinode.*\.spec\.ts$/], dependencies: ['setup'] },
    // Issue 18: specs that start their own nodes, database and Redis (never the shared server above).
    { name: 'multinode', testMatch: /multinode.*\.spec\.ts$/ },
  ],
  // Generous: on a loaded 2-core machine a test that takes 20 s alone can take 50 s.
  timeout: 120_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    viewport: { width: 1280, height: 800 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
  webServer: {
    command: `rm -rf ${DATA_DIR} && node ${CONTROL_PLANE_ARGS.join(' ')}`,
    url: `http://127.0.0.1:${PORT}/api/setup`,
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      PORT: String(PORT),
      HOST: '127.0.0.1',
      DATA_DIR,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      // Room for every spec's sessions (Free allows 3 at once); usage.spec.ts edits the plan it tests.
      AGENT_VILLAGE_DEFAULT_PLAN: 'team',
      // notifications.spec.ts posts the org's webhooks to a receiver on loopback.
      AGENT_VILLAGE_ALLOW_PRIVATE_WEBHOOKS: '1',
      // The attached runner offers `claude` through the fake agent CLI (real CLIs cannot log in here).
      AGENT_RUNNER_CLAUDE_BIN: `${process.cwd()}/e2e/fixtures/fake-agent/fake-claude.mjs`,
      // Quest agent steps run claude's headless mode; here the fake headless agent plays it.
      AGENT_RUNNER_WORKITEM_AGENTS: JSON.stringify({ claude: [process.execPath, `${process.cwd()}/e2e/fixtures/fake-agent/fake-headless.mjs`] }),
    },
  },
});

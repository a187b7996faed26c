import { defineConfig } from 'vitest/config';

// Unit tests sit beside the code (*.test.ts); integration tests (*.int.test.ts) start the real
// server, a real runner process, real PTYs and real git. Playwright's *.spec.ts are not ours.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{protocol,common,server,runner,components,app,bench}/**/*.test.{ts,tsx}'],
          // bench/.cache: what benches install on first use (bench:live's wetty and its node-pty, whose sources ship their tests).
          exclude: ['**/*.int.test.ts', 'node_modules/**', 'bench/.cache/**'],
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['{server,runner}/**/*.int.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // A root server runs its runner as another user: tests that read the runner's clones with
          // git must tell it those repositories are safe (git refuses other users' repositories).
          env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' },
          fileParallelism: false,
        },
      },
    ],
  },
});

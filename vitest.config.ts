import { defineConfig } from 'vitest/config';

// Unit tests sit beside the code (*.test.ts); integration tests (*.int.test.ts) start the real
// server, a real runner process, real PTYs and real git. Playwright's *.spec.ts are not ours.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{protocol,common,server,runner,components,app}/**/*.test.{ts,tsx}'],
          exclude: ['**/*.int.test.ts', 'node_modules/**'],
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
          fileParallelism: false,
        },
      },
    ],
  },
});

// The boundaries of ARCHITECTURE.md §3, enforced: protocol/ is the only code the server, the
// runner and the UI share; only server/services/ (and server/db.ts, server/db-postgres.ts) touch Prisma.
import tseslint from 'typescript-eslint';

const PRISMA = { regex: '(generated/prisma|^@prisma/)', message: 'Only server/services/ touches Prisma.' };
const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const area = (dir, message) => ({ regex: `(^|/)${dir}(/|$)`, message });

export default tseslint.config(
  { ignores: ['node_modules/**', '.next/**', 'data/**', 'server/generated/**', 'server/demo/**', 'test-results/**', 'next-env.d.ts'] },
  {
    files: ['**/*.{ts,tsx,mts}'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: { '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }] },
  },
  {
    files: ['protocol/**/*.ts'],
    ignores: ['protocol/**/*.test.ts'],
    rules: restrict({ regex: '^(?!zod$|\\./)', message: 'protocol/ is a leaf: it imports nothing but zod.' }),
  },
  {
    // common/ is the second leaf (ARCHITECTURE.md §3): logic both sides need that is not a wire
    // shape. It may use protocol/, zod and well-kept libraries, never a side of the house.
    files: ['common/**/*.ts'],
    rules: restrict(
      area('server', 'common/ is shared by every side: it never imports the control plane.'),
      area('runner', 'common/ is shared by every side: it never imports the runner.'),
      area('components', 'common/ never imports the UI.'),
      area('app', 'common/ never imports the web app.'),
      PRISMA,
    ),
  },
  {
    files: ['runner/**/*.ts'],
    rules: restrict(
      area('server', 'The runner talks to the control plane only through protocol/ messages.'),
      area('app', 'The runner never imports the web app.'),
      area('components', 'The runner never imports the UI.'),
      PRISMA,
    ),
  },
  {
    files: ['components/**/*.{ts,tsx}'],
    rules: restrict(
      area('server', 'The UI reaches the server only over HTTP and Socket.IO (protocol/).'),
      area('runner', 'The UI never talks to a runner.'),
      { regex: '^node-pty$', message: 'PTYs live on the runner.' },
      PRISMA,
    ),
  },
  {
    files: ['app/**/*.{ts,tsx}', 'server/realtime/**/*.ts', 'server/*.ts'],
    ignores: ['server/db.ts', 'server/db-postgres.ts'],
    rules: restrict(area('runner', 'The control plane starts runners as processes, never imports them.'), PRISMA),
  },
);

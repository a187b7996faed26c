// The boundaries of ARCHITECTURE.md §3, enforced: protocol/ is the only code the server, the
// runner and the UI share; only server/services/ touches Prisma.
import tseslint from 'typescript-eslint';

const noImport = (patterns, message) => ({
  'no-restricted-imports': ['error', { patterns: patterns.map((group) => ({ group: [group], message })) }],
});

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
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!zod$|\\./).*', message: 'protocol/ is a leaf: it imports nothing but zod.' }] },
      ],
    },
  },
  {
    files: ['runner/**/*.ts'],
    rules: noImport(['**/server/**', '**/app/**', '**/components/**', '@prisma/*', 'next', 'next/*'], 'The runner talks to the control plane only through protocol/ messages.'),
  },
  {
    files: ['components/**/*.{ts,tsx}'],
    rules: noImport(['**/server/**', '**/runner/**', '@prisma/*', 'node-pty'], 'The UI reaches the server only over HTTP and Socket.IO (protocol/).'),
  },
  {
    files: ['app/**/*.{ts,tsx}', 'server/realtime/**/*.ts', 'server/*.ts', 'runner/**/*.ts', 'components/**/*.{ts,tsx}'],
    ignores: ['server/db.ts'],
    rules: noImport(['**/generated/prisma/**', '@prisma/client', '@prisma/client/*'], 'Only server/services/ touches Prisma.'),
  },
);

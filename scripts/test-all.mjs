// `npm test`: unit → build → integration → end-to-end, then one summary line of all suites.
// Each suite's own runner does the work; this script only sequences them and adds up the counts.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv[2]; // optional: unit | integration | postgres | e2e | lint
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', FORCE_COLOR: '0' };
let passed = 0;
let failed = 0;
let broken = false;

/** A failure message's first line, without colour codes, cut to a readable length. */
function firstLine(message) {
  const line = String(message ?? '').replace(/\x1b\[[0-9;]*m/g, '').split('\n').find((l) => l.trim()) ?? '';
  return line.trim().slice(0, 300);
}

function run(cmd, args, { capture } = {}) {
  return new Promise((res) => {
    console.log(`\n$ ${cmd} ${args.join(' ')}`);
    const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'] });
    let out = '';
    child.stdout?.on('data', (b) => {
      process.stdout.write(b);
      out += b.toString();
    });
    child.on('close', (code) => res({ code: code ?? 1, out }));
  });
}

const vitestJson = resolve(root, '.reports/vitest.json');
/** The service suites that run a second time on PostgreSQL (server/integration/service-db.ts). */
const POSTGRES_SUITES = ['delivery-ingest', 'ingest-rows', 'usage-billing', 'patrol-limits', 'dta-locks', 'multinode-webhooks', 'terminal-segments', 'pg-migrations', 'control-plane', 'radar-cache'].map((n) => `server/integration/${n}.int.test.ts`);

/**
 * Suites that drive real processes, sockets and a browser on a shared 2-core machine get one more
 * try for a failed test (`SUITE_RETRIES`). A test that passes only on its second try counts as
 * passed but is named below the summary as flaky, so an intermittent bug stays in sight; a test
 * that fails twice fails. Unit tests get no retry: nothing in them may depend on the machine.
 */
const SUITE_RETRIES = 1;
const flaky = [];
/** Each failed test by name, printed last, beside the summary: CI's log may keep only its tail. */
const failures = [];

async function vitest(project, files = []) {
  rmSync(vitestJson, { force: true });
  const retry = project === 'unit' ? [] : [`--retry=${SUITE_RETRIES}`];
  const { code } = await run('npx', ['vitest', 'run', '--project', project, ...retry, '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`, ...files]);
  if (existsSync(vitestJson)) {
    const r = JSON.parse(readFileSync(vitestJson, 'utf8'));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    // A passed test that carries failure messages passed on a retry.
    for (const file of r.testResults ?? []) {
      const where = file.name ? file.name.replace(`${root}/`, '') : '?';
      for (const t of file.assertionResults ?? []) {
        if (t.status === 'passed' && t.failureMessages?.length) flaky.push(`${project}: ${where} › ${t.fullName}\n      first try: ${firstLine(t.failureMessages[0])}`);
        if (t.status === 'failed') failures.push(`${project}: ${where} › ${t.fullName}\n      ${firstLine(t.failureMessages?.[0])}`);
      }
      // A file that failed outside its tests (it did not load, or a hook threw).
      // It counts as one failed test: its tests did not run.
      if (file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed')) {
        failures.push(`${project}: ${where}\n      ${firstLine(file.message)}`);
        failed += 1;
      }
    }
  }
  if (code !== 0) broken = true;
}

async function playwright() {
  const json = resolve(root, '.reports/playwright.json');
  rmSync(json, { force: true });
  env.PLAYWRIGHT_JSON_OUTPUT_NAME = json;
  const { code } = await run('npx', ['playwright', 'test', `--retries=${SUITE_RETRIES}`, '--reporter=list,json']);
  if (existsSync(json)) {
    const r = JSON.parse(readFileSync(json, 'utf8'));
    passed += r.stats.expected + (r.stats.flaky ?? 0);
    failed += r.stats.unexpected;
    const walk = (suite) => {
      for (const spec of suite.specs ?? []) {
        for (const t of spec.tests ?? []) {
          if (t.status === 'flaky') flaky.push(`e2e: ${spec.title}`);
          if (t.status === 'unexpected') failures.push(`e2e: ${spec.file}:${spec.line} › ${spec.title}\n      ${firstLine(t.results?.at(-1)?.error?.message)}`);
        }
      }
      for (const child of suite.suites ?? []) walk(child);
    };
    for (const suite of r.suites ?? []) walk(suite);
  }
  if (code !== 0) broken = true;
}

const steps = {
  lint: async () => {
    const lint = await run('npx', ['eslint', '.']);
    const tsc = await run('npx', ['tsc', '--noEmit', '-p', '.']);
    // Per-area settings: browser code without Node's types, the leaves with neither Node nor DOM.
    const browser = await run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.browser.json']);
    const leaf = await run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.leaf.json']);
    // The PostgreSQL copy of the schema must not drift from prisma/schema.prisma.
    const dbCheck = await run('node', ['scripts/db-sync.mjs', '--check']);
    if (lint.code || tsc.code || browser.code || leaf.code || dbCheck.code) {
      broken = true;
      failed += 1;
    } else passed += 1;
  },
  unit: () => vitest('unit'),
  build: async () => {
    // The e2e specs read the village's window.__village test hooks: only a test build has them.
    env.NEXT_PUBLIC_AV_TEST_HOOKS = '1';
    const { code } = await run('npx', ['next', 'build']);
    if (code !== 0) {
      broken = true;
      failed += 1;
    }
  },
  integration: () => vitest('integration'),
  // The service suites again on PostgreSQL (README "Past one machine"), when it is installed.
  postgres: async () => {
    const { PG_BIN, startPostgres } = await import('./pg-cluster.mjs');
    if (!PG_BIN) return console.log('\n[postgres] skipped: PostgreSQL is not installed (apt-get install postgresql)');
    const cluster = await startPostgres();
    env.AV_TEST_POSTGRES_URL = cluster.url.replace(/\/[^/]*$/, '');
    try {
      await vitest('integration', POSTGRES_SUITES);
    } finally {
      delete env.AV_TEST_POSTGRES_URL;
      cluster.stop();
    }
  },
  e2e: () => playwright(),
};

for (const [name, step] of Object.entries(steps)) {
  if (only && only !== name && !(only !== 'lint' && only !== 'unit' && name === 'build') && !(only === 'integration' && name === 'postgres')) continue;
  await step();
}
if (failures.length) console.log(`\n${failures.length} failed:\n${failures.map((f) => `  FAILED ${f}`).join('\n')}`);
if (flaky.length) console.log(`\n${flaky.length} flaky (failed once, passed on the retry; look at them):\n${flaky.map((f) => `  FLAKY ${f}`).join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(broken || failed ? 1 : 0);

import type { Rand } from './rule';

/**
 * Ordinary terminal output of the kinds people flood a terminal with, generated from a seeded
 * random source (bench/redaction.ts measures the redactor on each; the differential test plants
 * secrets in them). No secrets here: what the redactor must pass through untouched and fast.
 */
export interface OutputKind {
  name: string;
  /** About `chars` characters of this kind of output (whole lines, CRLF as a PTY writes them). */
  make(r: Rand, chars: number): string;
}

const WORDS = ['user', 'config', 'server', 'handler', 'request', 'cache', 'index', 'module', 'value', 'result', 'session', 'token', 'build', 'route', 'client', 'error', 'data', 'item'];
const hex = (r: Rand, n: number) => r.chars('0-9a-f', n);
const pad2 = (k: number) => String(k).padStart(2, '0');

function lines(chars: number, line: (k: number) => string): string {
  const out: string[] = [];
  let size = 0;
  for (let k = 0; size < chars; k++) {
    const l = line(k);
    out.push(l);
    size += l.length;
  }
  return out.join('');
}

export const OUTPUT_KINDS: readonly OutputKind[] = [
  { name: 'numbered lines (seq)', make: (_r, n) => lines(n, (k) => `${k + 1}\r\n`) },
  {
    name: 'build log, coloured',
    make: (r, n) =>
      lines(n, (k) =>
        k % 4 === 0
          ? `\x1b[2m12:00:${pad2(k % 60)}\x1b[0m \x1b[32mINFO\x1b[0m compiled src/${r.pick(WORDS)}/${r.pick(WORDS)}_${k}.ts in ${r.int(900)} ms (hash ${hex(r, 8)})\r\n`
          : k % 4 === 1
            ? `  at Object.<anonymous> (/home/dev/app/src/handlers/${r.pick(WORDS)}_${k}.js:${r.int(400)}:${r.int(80)})\r\n`
            : k % 4 === 2
              ? `[${r.int(100)}%] Building CXX object src/CMakeFiles/app.dir/${r.pick(WORDS)}.cpp.o -O2 -Wall -I/usr/include\r\n`
              : `\x1b[33mwarning\x1b[0m: unused variable \`${r.pick(WORDS)}_${k}\` --> src/${r.pick(WORDS)}.rs:${r.int(300)}:${r.int(40)}\r\n`,
      ),
  },
  {
    name: 'source code (cat *.ts)',
    make: (r, n) =>
      lines(n, (k) => {
        const w = r.pick(WORDS);
        return [
          `export function ${w}${k}(input: string, opts: Options = {}): Promise<${r.pick(['void', 'string', 'number'])}> {\r\n`,
          `  const ${w} = await this.${r.pick(WORDS)}.get(\`/api/${w}/\${id}\`, { timeout: ${r.int(5000)} });\r\n`,
          `  // ${r.pick(WORDS)} the ${r.pick(WORDS)} before the ${r.pick(WORDS)} is read (issue ${r.int(200)})\r\n`,
          `  if (${w}.length > MAX_${w.toUpperCase()}) throw new RangeError('${w} is too long');\r\n`,
          `  return ${w}.map((x) => x.${r.pick(WORDS)} ?? null).filter(Boolean);\r\n}\r\n\r\n`,
        ][k % 5];
      }),
  },
  {
    name: 'JSON (cat file.json)',
    make: (r, n) =>
      `[\r\n${lines(n, (k) => `  {"id": ${k}, "name": "${r.pick(WORDS)}-${hex(r, 6)}", "email": "${r.pick(WORDS)}${k}@example.com", "active": ${k % 2 === 0}, "score": ${r.int(10000) / 100}, "tags": ["${r.pick(WORDS)}", "${r.pick(WORDS)}"], "created": "2026-11-${pad2(1 + (k % 28))}T0${k % 10}:${pad2(k % 60)}:00Z"},\r\n`)}]\r\n`,
  },
  {
    name: 'CSV',
    make: (r, n) =>
      `id,name,city,amount,date,status\r\n${lines(n, (k) => `${k},${r.pick(WORDS)} ${r.pick(WORDS)},${r.pick(['Berlin', 'Lyon', 'Osaka', 'Lima'])},${r.int(100000) / 100},2026-${pad2(1 + (k % 12))}-${pad2(1 + (k % 28))},${r.pick(['paid', 'open', 'void'])}\r\n`)}`,
  },
  {
    name: 'test output, coloured',
    make: (r, n) =>
      lines(n, (k) =>
        k % 7 === 6
          ? ` \x1b[31m❯\x1b[39m src/${r.pick(WORDS)}.test.ts \x1b[2m(\x1b[22m${r.int(40)} tests \x1b[2m|\x1b[22m \x1b[31m1 failed\x1b[39m\x1b[2m)\x1b[22m \x1b[33m${r.int(900)}\x1b[2mms\x1b[22m\x1b[39m\r\n`
          : `   \x1b[32m✓\x1b[39m ${r.pick(WORDS)} ${r.pick(['returns', 'keeps', 'rejects', 'reads'])} the ${r.pick(WORDS)} when ${r.pick(WORDS)} is ${r.pick(['empty', 'set', 'stale'])} \x1b[2m${r.int(50)}ms\x1b[22m\r\n`,
      ),
  },
  {
    name: 'base64 blob',
    make: (r, n) => lines(n, () => `${r.chars('A-Za-z0-9+/', 76)}\r\n`),
  },
  {
    name: 'ls -l',
    make: (r, n) =>
      lines(n, (k) => `${r.pick(['-rw-r--r--', 'drwxr-xr-x', '-rwxr-xr-x', 'lrwxrwxrwx'])} ${1 + r.int(9)} dev dev ${String(r.int(1_000_000)).padStart(8)} Nov ${pad2(1 + (k % 28))} ${pad2(k % 24)}:${pad2(k % 60)} \x1b[01;34m${r.pick(WORDS)}_${k}\x1b[0m\r\n`),
  },
];

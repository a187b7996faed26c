#!/usr/bin/env node
// Example deterministic agent: its parameters arrive as --flags (the executor builds them from the
// blueprint's schema: booleans as bare flags, lists comma-joined); the result is JSON on stdout.
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    text: { type: 'string' },
    top: { type: 'string', default: '3' },
    ignore_case: { type: 'boolean', default: false },
    stop_words: { type: 'string', default: '' },
    report_url: { type: 'string' },
  },
  strict: true,
});
const text = values.text ?? '';
const stop = new Set(values.stop_words.split(',').filter(Boolean).map((w) => (values.ignore_case ? w.toLowerCase() : w)));
const words = (text.match(/[\p{L}\p{N}'’-]+/gu) ?? []).map((w) => (values.ignore_case ? w.toLowerCase() : w)).filter((w) => !stop.has(w));
const counts = new Map();
for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, Number(values.top)).map(([word, count]) => ({ word, count }));
process.stdout.write(JSON.stringify({ words: words.length, distinct: counts.size, top, ...(values.report_url ? { report_url: values.report_url } : {}) }) + '\n');

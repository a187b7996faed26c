#!/usr/bin/env node
// A stand-in for `claude -p --output-format json <prompt>` as a planner (the real CLI cannot reach
// its service here). FAKE_PLANNER_MODE picks the answer: valid | invalid-json | cycle |
// unknown-skill | rate-limit | hang | invalid-then-valid (FAKE_PLANNER_STATE counts calls).
// Valid answers vary their wording (like a model at temperature 0 would not be byte-stable), never
// their structure. The prompt (last argument) is echoed into FAKE_PLANNER_PROMPT_LOG when set.
// `--plan-file <path>` answers with the steps in that JSON file instead (tests of the quest engine).
import fs from 'node:fs';

const planFileAt = process.argv.indexOf('--plan-file');
if (planFileAt > 0) {
  const planned = JSON.parse(fs.readFileSync(process.argv[planFileAt + 1], 'utf8'));
  process.stdout.write(`${JSON.stringify({ type: 'result', is_error: false, model: 'fake-planner-1', result: JSON.stringify({ steps: planned }), usage: { input_tokens: 10, output_tokens: 10 } })}\n`);
  process.exit(0);
}

const mode = process.env.FAKE_PLANNER_MODE ?? 'valid';
const prompt = process.argv.at(-1) ?? '';
if (process.env.FAKE_PLANNER_PROMPT_LOG) fs.appendFileSync(process.env.FAKE_PLANNER_PROMPT_LOG, `${JSON.stringify(prompt)}\n`);
let call = 1;
if (process.env.FAKE_PLANNER_STATE) {
  call = Number(fs.existsSync(process.env.FAKE_PLANNER_STATE) ? fs.readFileSync(process.env.FAKE_PLANNER_STATE, 'utf8') : '0') + 1;
  fs.writeFileSync(process.env.FAKE_PLANNER_STATE, String(call));
}
const params = { from_hosts: ['https://old.example.com'], to_host: 'https://new.example.com' };
const steps = [
  { step_id: 'dry_run', skill: 'dta.link_updater', params: { mode: 'dry-run', params }, depends_on: [], reason: `links move (${Math.random().toString(36).slice(2, 8)})` },
  { step_id: 'gate', skill: 'gate', params: { of: 'dry_run' }, depends_on: ['dry_run'], reason: 'approve first' },
  { step_id: 'apply', skill: 'dta.link_updater', params: { mode: 'apply', params, patch_of: 'dry_run' }, depends_on: ['gate'], reason: 'apply the approved patch' },
];
const envelope = (result) => process.stdout.write(`${JSON.stringify({ type: 'result', is_error: false, model: 'fake-planner-1', result, usage: { input_tokens: 1200, output_tokens: 180 } })}\n`);

if (mode === 'rate-limit') {
  process.stderr.write('API Error: 429 rate_limit_error\n');
  process.exit(1);
} else if (mode === 'hang') {
  setTimeout(() => {}, 600_000);
} else if (mode === 'invalid-json' || (mode === 'invalid-then-valid' && call === 1)) {
  envelope('Here is the plan: {"steps": [ {"step_id": "s1", ');
} else if (mode === 'cycle') {
  envelope(JSON.stringify({ steps: [{ ...steps[0], depends_on: ['apply'] }, steps[1], steps[2]] }));
} else if (mode === 'unknown-skill') {
  envelope(JSON.stringify({ steps: [{ ...steps[0], skill: 'dta.teleport' }] }));
} else {
  envelope(`\`\`\`json\n${JSON.stringify({ steps })}\n\`\`\``);
}

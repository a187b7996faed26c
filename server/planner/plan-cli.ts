import { canonicalJson } from '../../common/canonical';
import { RulePlanner } from './rule-planner';
import { buildManifest } from './skills';

/**
 * Plans one goal in a fresh process and prints the plan's canonical JSON: the determinism test
 * compares it across a process restart (no state may leak from one process's memory).
 * Usage: node --import tsx server/planner/plan-cli.ts "<goal>"
 */
const goal = process.argv[2] ?? '';
const out = await new RulePlanner().plan({ agent_id: 'quest', goal, tool_manifest: buildManifest({ providers: ['claude', 'shell'] }) });
process.stdout.write(out.ok ? canonicalJson(out.output.plan) : canonicalJson(out.error));

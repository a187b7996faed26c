/**
 * The plan's DAG as levels (agentrun-contract.md "Dependency Resolution"): level 0 holds the steps
 * with no dependencies, level N those whose dependencies all sit in earlier levels. Within a
 * level, steps keep plan order (merge order is step order). A cycle leaves steps unplaced.
 */
export interface DagNode {
  step_id: string;
  depends_on: string[];
}

export function dagLevels(steps: readonly DagNode[]): { levels: string[][]; cyclic: string[] } {
  const placed = new Map<string, number>();
  const levels: string[][] = [];
  let remaining = [...steps];
  while (remaining.length) {
    const level = remaining.filter((s) => s.depends_on.every((d) => placed.has(d)));
    if (!level.length) break;
    for (const s of level) placed.set(s.step_id, levels.length);
    levels.push(level.map((s) => s.step_id));
    remaining = remaining.filter((s) => !placed.has(s.step_id));
  }
  return { levels, cyclic: remaining.map((s) => s.step_id) };
}

import { Graph, layout } from '@dagrejs/dagre';

/**
 * The plan's DAG as boxes and edges, laid out by dagre (top to bottom, ranks = dependency levels).
 * Pure: the same plan gives the same picture.
 */

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 64;
/** Space between ranks and between boxes of one rank, in px. */
const RANK_SEP = 40;
const NODE_SEP = 30;

export interface LaidOutNode {
  id: string;
  x: number;
  y: number;
}

export function layoutPlan(steps: readonly { step_id: string; depends_on: string[] }[]): { nodes: LaidOutNode[]; edges: { id: string; source: string; target: string }[] } {
  const g = new Graph();
  g.setGraph({ rankdir: 'TB', ranksep: RANK_SEP, nodesep: NODE_SEP });
  g.setDefaultEdgeLabel(() => ({}));
  for (const s of steps) g.setNode(s.step_id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  const edges = steps.flatMap((s) => s.depends_on.filter((d) => steps.some((x) => x.step_id === d)).map((d) => ({ id: `${d}->${s.step_id}`, source: d, target: s.step_id })));
  for (const e of edges) g.setEdge(e.source, e.target);
  layout(g);
  // dagre gives centres; the graph view wants top-left corners.
  const nodes = steps.map((s) => {
    const n = g.node(s.step_id);
    return { id: s.step_id, x: Math.round(n.x - NODE_WIDTH / 2), y: Math.round(n.y - NODE_HEIGHT / 2) };
  });
  return { nodes, edges };
}

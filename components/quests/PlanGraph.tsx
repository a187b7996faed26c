'use client';
import { Background, Handle, Position, ReactFlow, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import type { PlanStep, QuestStepSummary } from '../../protocol';
import { layoutPlan, NODE_HEIGHT, NODE_WIDTH } from './plan-layout';

type StepNode = Node<{ step: PlanStep; state: string }, 'step'>;

function StepBox({ data }: NodeProps<StepNode>) {
  return (
    <div className={`quest-node quest-state-${data.state}`} style={{ width: NODE_WIDTH, height: NODE_HEIGHT }} data-testid={`plan-node-${data.step.step_id}`}>
      <Handle type="target" position={Position.Top} />
      <strong>{data.step.step_id}</strong> <span className="muted small">{data.state.replaceAll('_', ' ')}</span>
      <div className="small">
        <code>{data.step.skill}</code>
        {typeof data.step.params.mode === 'string' ? ` (${data.step.params.mode})` : ''}
      </div>
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

const nodeTypes = { step: StepBox };

/** The plan as a DAG picture (React Flow, laid out by dagre): one box per step, coloured by state. */
export default function PlanGraph({ steps, states }: { steps: PlanStep[]; states: QuestStepSummary[] }) {
  const { nodes, edges } = useMemo(() => {
    const laid = layoutPlan(steps);
    const stateOf = new Map(states.map((s) => [s.step_id, s.state]));
    return {
      nodes: laid.nodes.map((n): StepNode => ({ id: n.id, type: 'step', position: { x: n.x, y: n.y }, data: { step: steps.find((s) => s.step_id === n.id)!, state: stateOf.get(n.id) ?? 'pending' }, draggable: false })),
      edges: laid.edges.map((e) => ({ ...e, animated: stateOf.get(e.target) === 'running' })),
    };
  }, [steps, states]);
  return (
    <div className="quest-graph" role="img" aria-label={`Plan: ${steps.map((s) => s.step_id).join(' → ')}`}>
      <ReactFlow nodes={nodes} edges={edges} nodeTypes={nodeTypes} fitView nodesConnectable={false} elementsSelectable={false} proOptions={{ hideAttribution: true }}>
        <Background />
      </ReactFlow>
    </div>
  );
}

'use client';
import { Background, BackgroundVariant, Handle, Position, ReactFlow, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import type { PlanStep, QuestStepView } from '../../protocol';
import { layoutPlan, NODE_HEIGHT, NODE_WIDTH } from './plan-layout';
import { STATE_WORDS } from './progress';

type StepNode = Node<{ step: PlanStep; state: QuestStepView['state'] }, 'step'>;

function StepBox({ data }: NodeProps<StepNode>) {
  return (
    <div className={`quest-node quest-state-${data.state}`} style={{ width: NODE_WIDTH, height: NODE_HEIGHT }} data-testid={`plan-node-${data.step.step_id}`}>
      <Handle type="target" position={Position.Top} />
      <div className="quest-node-head">
        <strong>{data.step.step_id}</strong> <span className="quest-node-state">{STATE_WORDS[data.state]}</span>
      </div>
      <div className="quest-node-skill">
        {data.step.skill}
        {typeof data.step.params.mode === 'string' ? ` (${data.step.params.mode})` : ''}
      </div>
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

const nodeTypes = { step: StepBox };

/**
 * The plan as a DAG picture (React Flow, laid out by dagre): one box per step, coloured by state.
 * A picture, not a control: nothing in it takes focus or the wheel (the step cards below hold
 * every action), so Tab and scrolling pass through it.
 */
export default function PlanGraph({ steps, states }: { steps: PlanStep[]; states: QuestStepView[] }) {
  const { nodes, edges } = useMemo(() => {
    const laid = layoutPlan(steps);
    const stateOf = new Map(states.map((s) => [s.step_id, s.state]));
    return {
      nodes: laid.nodes.map((n): StepNode => ({ id: n.id, type: 'step', position: { x: n.x, y: n.y }, data: { step: steps.find((s) => s.step_id === n.id)!, state: stateOf.get(n.id) ?? 'pending' }, draggable: false })),
      edges: laid.edges.map((e) => ({ ...e, animated: stateOf.get(e.target) === 'running', className: `quest-edge quest-edge-${stateOf.get(e.source) ?? 'pending'}` })),
    };
  }, [steps, states]);
  const words = steps.map((s) => s.step_id).join(' → ');
  return (
    <div className="quest-graph" role="img" aria-label={`Plan: ${words}`}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        colorMode="dark"
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        elementsSelectable={false}
        zoomOnScroll={false}
        preventScrolling={false}
        proOptions={{ hideAttribution: true }}
      >
        <Background variant={BackgroundVariant.Dots} gap={16} size={1} color="#3a3f4b" />
      </ReactFlow>
    </div>
  );
}

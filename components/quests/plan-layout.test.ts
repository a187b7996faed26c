import { describe, expect, it } from 'vitest';
import { layoutPlan, NODE_HEIGHT } from './plan-layout';

describe('plan layout', () => {
  it('puts each dependency level below the one before and is the same every time', () => {
    const steps = [
      { step_id: 'dry_run', depends_on: [] },
      { step_id: 'gate', depends_on: ['dry_run'] },
      { step_id: 'apply', depends_on: ['gate'] },
      { step_id: 'verify', depends_on: ['apply'] },
    ];
    const a = layoutPlan(steps);
    expect(a.edges.map((e) => e.id)).toEqual(['dry_run->gate', 'gate->apply', 'apply->verify']);
    const y = Object.fromEntries(a.nodes.map((n) => [n.id, n.y]));
    expect(y.gate! - y.dry_run!).toBeGreaterThanOrEqual(NODE_HEIGHT);
    expect(y.verify!).toBeGreaterThan(y.apply!);
    expect(layoutPlan(steps)).toEqual(a);
  });

  it('places independent steps of one level side by side', () => {
    const a = layoutPlan([
      { step_id: 'a', depends_on: [] },
      { step_id: 'b', depends_on: [] },
      { step_id: 'c', depends_on: ['a', 'b'] },
    ]);
    const [na, nb] = [a.nodes.find((n) => n.id === 'a')!, a.nodes.find((n) => n.id === 'b')!];
    expect(na.y).toBe(nb.y);
    expect(na.x).not.toBe(nb.x);
  });
});

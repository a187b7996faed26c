import { NextResponse } from 'next/server';
import { route } from '../../../../../_lib/route';

// GET /api/quests/:id/steps/:step/receipt – the step's RECEIPT.json as a download
export const GET = route({ role: 'viewer' }, async ({ services, principal, params }) => {
  const q = await services.quests.get(principal, params.id!);
  const step = q.steps.find((s) => s.step_id === params.step);
  if (!step?.receipt) return NextResponse.json({ ok: false, error: { code: 'NOT_FOUND', message: 'That step has no receipt.' } }, { status: 404 });
  return new NextResponse(`${JSON.stringify(step.receipt, null, 2)}\n`, {
    headers: { 'content-type': 'application/json', 'content-disposition': `attachment; filename="RECEIPT-${q.id}-${step.step_id}.json"` },
  });
});

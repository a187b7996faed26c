import { NextResponse } from 'next/server';
import { CreateQuestBodySchema, questUpdated } from '../../../protocol';
import { route } from '../_lib/route';

// GET /api/quests – the latest quests, newest first, in the pushed shape (quest:updated): patches cut to a
// preview, so the board and the village load fast; one quest whole: GET /api/quests/:id
export const GET = route({ role: 'viewer' }, async ({ services, principal }) => (await services.quests.list(principal)).map(questUpdated));

// POST /api/quests – plan a goal for a repository: the quest with its validated plan and plan_input_hash (201)
export const POST = route({ role: 'operator', body: CreateQuestBodySchema }, async ({ services, principal, body }) =>
  NextResponse.json({ ok: true, data: await services.quests.create(principal, body) }, { status: 201 }),
);

import { NextResponse } from 'next/server';
import { route } from '../../../_lib/route';
import { storyMarkdown } from '../../../../../server/services/story-markdown';

// GET /api/sessions/:id/story – the session's one-page story; ?format=md as Markdown for a PR description
export const GET = route({ role: 'viewer' }, async ({ req, services, principal, params }) => {
  const story = await services.stories.story(principal, params.id!);
  if (req.nextUrl.searchParams.get('format') !== 'md') return story;
  const link = new URL(`/sessions/${story.session.id}`, req.nextUrl.origin).toString();
  return new NextResponse(storyMarkdown(story, link), {
    headers: { 'content-type': 'text/markdown; charset=utf-8', 'content-disposition': `attachment; filename="session-${story.session.id}.md"` },
  });
});

import StoryScreen from '../../../components/story/StoryScreen';

// /sessions/:id – the session's story (linkable; ended sessions stay reachable here)
export default async function SessionStoryPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <StoryScreen sessionId={id} />;
}

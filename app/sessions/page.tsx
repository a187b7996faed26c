import EndedSessionsPage from '../../components/story/EndedSessionsPage';

// /sessions – every ended session of the org, newest first, each opening its story
export default function SessionsPage() {
  return <EndedSessionsPage />;
}

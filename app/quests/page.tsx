import QuestsScreen from '../../components/quests/QuestsScreen';

export default function QuestsPage() {
  return <QuestsScreen />;
}

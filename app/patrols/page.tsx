import PatrolsScreen from '../../components/ui/PatrolsScreen';

export default function PatrolsPage() {
  return <PatrolsScreen />;
}

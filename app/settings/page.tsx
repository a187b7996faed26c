import SettingsScreen from '../../components/ui/SettingsScreen';

export default function SettingsPage() {
  return <SettingsScreen />;
}

import VillageScreen from '../components/ui/VillageScreen';

export default function HomePage() {
  return <VillageScreen />;
}

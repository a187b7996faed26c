import WorkshopScreen from '../../components/workshop/WorkshopScreen';

export default function WorkshopPage() {
  return <WorkshopScreen />;
}

import PolicyScreen from '../../components/ui/PolicyScreen';

export default function PolicyPage() {
  return <PolicyScreen />;
}

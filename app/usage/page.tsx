import UsageScreen from '../../components/usage/UsageScreen';

export default function UsagePage() {
  return <UsageScreen />;
}

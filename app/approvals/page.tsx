import ApprovalsScreen from '../../components/approvals/ApprovalsScreen';

export default function ApprovalsPage() {
  return <ApprovalsScreen />;
}

import ApprovalLinkScreen from '../../components/approvals/ApprovalLinkScreen';

export default function ApprovalLinkPage() {
  return <ApprovalLinkScreen />;
}

import AuditScreen from '../../components/ui/AuditScreen';

export default function AuditPage() {
  return <AuditScreen />;
}

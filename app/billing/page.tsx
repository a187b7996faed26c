import BillingScreen from '../../components/usage/BillingScreen';

export default function BillingPage() {
  return <BillingScreen />;
}

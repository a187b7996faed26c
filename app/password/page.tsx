import ChangePasswordScreen from '../../components/ui/ChangePasswordScreen';

export default function PasswordPage() {
  return <ChangePasswordScreen />;
}

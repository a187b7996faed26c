import AuthForm from '../../components/ui/AuthForm';

export default function SetupPage() {
  return <AuthForm mode="setup" />;
}

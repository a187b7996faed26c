import AuthForm from '../../components/ui/AuthForm';

export default function LoginPage() {
  return <AuthForm mode="login" />;
}

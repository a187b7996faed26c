'use client';
import type { ReactNode } from 'react';
import { useMutation } from '@tanstack/react-query';
import { errorText } from '../../common/error-text';

/**
 * The card every sign-in screen is (setup, login, change password, accept an invite): a title, the
 * screen's own fields, one submit button that is busy while the request runs, and what went wrong
 * under the fields. `action` receives the form's fields; whatever it throws is shown as text.
 */
export function AuthCard<T>({
  title,
  submitLabel,
  action,
  onSuccess,
  onError,
  art = true,
  ready = true,
  children,
}: {
  title: string;
  submitLabel: string;
  action: (form: FormData) => Promise<T>;
  onSuccess: (result: T) => void;
  onError?: (err: Error) => void;
  /** The village's little roofline over the title. */
  art?: boolean;
  /** False while the screen cannot be submitted yet (an invite still loading): no error or button. */
  ready?: boolean;
  children: ReactNode;
}) {
  const mutation = useMutation({ mutationFn: action, onSuccess, onError });
  // After success the screen navigates away: the button stays busy until it has.
  const busy = mutation.isPending || mutation.isSuccess;
  return (
    <main className="auth-page">
      <form
        className="auth-card"
        onSubmit={(e) => {
          e.preventDefault();
          mutation.mutate(new FormData(e.currentTarget));
        }}
        aria-labelledby="auth-title"
      >
        {art && (
          <div className="auth-art" aria-hidden>
            <span>▲</span>
            <span>■</span>
            <span>▲</span>
          </div>
        )}
        <h1 id="auth-title">{title}</h1>
        {children}
        {ready && mutation.error && (
          <p className="error-line" role="alert">
            {errorText(mutation.error)}
          </p>
        )}
        {ready && (
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Please wait…' : submitLabel}
          </button>
        )}
      </form>
    </main>
  );
}

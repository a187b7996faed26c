import type { ReactNode } from 'react';
import Providers from './providers';
import './globals.css';

// A plain object (Next.js checks its shape at build time): importing the `Metadata` type from 'next'
// would load Node's types into the browser code's type check (tsconfig.browser.json).
export const metadata = {
  title: 'Agent Village',
  description: 'AI coding agents at work in a pixel village of your repositories.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}

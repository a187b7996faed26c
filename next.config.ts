import type { NextConfig } from 'next';

const config: NextConfig = {
  // Say nothing about what serves the pages (security headers: server/http-guard.ts).
  poweredByHeader: false,
};

export default config;

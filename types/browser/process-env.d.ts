// In the browser `process` does not exist: Next.js replaces `process.env.NEXT_PUBLIC_*` and
// `NODE_ENV` with their values at build time. This declares exactly that much, so a component
// cannot reach for anything else of Node's `process`.
declare const process: {
  readonly env: {
    readonly NODE_ENV?: string;
    readonly [name: `NEXT_PUBLIC_${string}`]: string | undefined;
  };
};

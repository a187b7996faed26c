/** Reported in runner:register; bump with package.json when the runner's behaviour changes. */
export const RUNNER_VERSION = '0.1.0';

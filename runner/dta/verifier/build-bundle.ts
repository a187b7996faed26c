import { ensureVerifierBundle } from './bundle';

/**
 * `npm run build:dta-verifier` (run by `npm run build` and `npm start`): builds the verifier's
 * bundle unless a fresh one is there. A failure is said and is no error: verifiers then run
 * through tsx, and the runner tries again when it starts one.
 */
const entry = await ensureVerifierBundle();
console.log(entry ? `dta verifier: ${entry}` : 'dta verifier: no prebuilt entry; verifiers run through tsx');

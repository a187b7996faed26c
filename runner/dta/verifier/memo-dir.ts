/**
 * The variable that tells a verifier process where the runner keeps its memo (spawn.ts sets it,
 * main.ts reads it), in a module of its own: the runner imports it without the verifier's code.
 */
export const VERIFIER_MEMO_DIR_ENV = 'AV_DTA_VERIFIER_MEMO_DIR';

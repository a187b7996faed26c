import { z } from 'zod';

/**
 * The runner is done with a verifier process for the run (spawn.ts): it saves its memo, forgets the
 * run (verify.ts forgetRun) and answers whether it may serve the next run as the warm spare.
 */
export const EndRunRequestSchema = z.object({ mode: z.literal('end-run') });
/** The answer to an end-run request: false after a crash in this run (the runner starts a fresh one). */
export const EndRunAnswerSchema = z.object({ ready: z.boolean() });

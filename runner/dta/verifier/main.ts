import { verify, VerifyRequestSchema } from './verify';

/**
 * The verifier as its own process: a request on stdin, a DtaVerifier on stdout, JSON only. The
 * runner starts it after the adapter finished, so nothing of the adapter's memory reaches it.
 */
async function main(): Promise<void> {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const parsed = VerifyRequestSchema.safeParse(JSON.parse(input));
  if (!parsed.success) {
    process.stdout.write(JSON.stringify({ passed: false, checks: [], failures: [`bad verify request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`], sample_size: 0 }));
    process.exitCode = 2;
    return;
  }
  const result = await verify(parsed.data);
  process.stdout.write(JSON.stringify(result));
}

main().catch((err: unknown) => {
  process.stdout.write(JSON.stringify({ passed: false, checks: [], failures: [`verifier crashed: ${err instanceof Error ? err.message : String(err)}`], sample_size: 0 }));
  process.exitCode = 1;
});

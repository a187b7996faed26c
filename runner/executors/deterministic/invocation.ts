import { describeZodError, InvocationSchema, type Invocation } from '../../../protocol';
import { errorText } from '../../../common/error-text';

export type InvocationResult = { ok: true; invocation: Invocation } | { ok: false; error: string };

/** The executor's stdin: one JSON object (schema 2.2). Anything else is refused with the reason. */
export function parseInvocation(text: string): InvocationResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `the invocation on stdin is not JSON (${errorText(err)})` };
  }
  const parsed = InvocationSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: `invalid invocation: ${describeZodError(parsed.error)}` };
  return { ok: true, invocation: parsed.data };
}

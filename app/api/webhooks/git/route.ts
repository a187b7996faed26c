import { NextResponse, type NextRequest } from 'next/server';
import { MAX_WEBHOOK_BYTES } from '../../../../protocol';
import { getServices } from '../../../../server/context';
import { BodyTooLargeError, readBodyLimited } from '../../_lib/body';

// POST /api/webhooks/git – GitHub's push event, signed (X-Hub-Signature-256) with the repository's
// webhook secret; a push to the default branch runs the repository's patrols. No login: the
// signature is the credential, checked over the raw body.
export async function POST(req: NextRequest): Promise<NextResponse> {
  try {
    let body: Buffer;
    try {
      body = await readBodyLimited(req, MAX_WEBHOOK_BYTES);
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      return NextResponse.json({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE', message: `Payload larger than ${MAX_WEBHOOK_BYTES} bytes.` } }, { status: 413 });
    }
    const res = await getServices().webhooks.handle({
      event: req.headers.get('x-github-event'),
      delivery: req.headers.get('x-github-delivery'),
      signature: req.headers.get('x-hub-signature-256'),
      body,
    });
    return NextResponse.json(res.body, { status: res.status });
  } catch (err) {
    console.error('[server] POST /api/webhooks/git failed:', err);
    return NextResponse.json({ ok: false, error: { code: 'INTERNAL', message: 'Something went wrong on the server; the error was logged.' } }, { status: 500 });
  }
}

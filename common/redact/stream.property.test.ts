import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCorpus, leaked } from './corpus';
import { createStreamRedactor, DEFAULT_RULES } from './index';
import { streamed } from './testing';

/**
 * Issue 10's properties: for any split of the output into writes and any pauses between them, no
 * secret survives and harmless text is unchanged. There is no timer inside the redactor, so pauses
 * cannot change its output; the async property checks that with real pauses anyway.
 */
const corpus = buildCorpus(10);
const { orgSecrets } = corpus;
const anyCase = fc.constantFrom(...corpus.cases);
const cutsOf = (text: string) => fc.array(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 40 });

describe('stream redactor properties', () => {
  it('for any case and any split, nothing leaks, harmless text is unchanged, and the output is that of one write', () => {
    fc.assert(
      fc.property(anyCase.chain((c) => fc.tuple(fc.constant(c), cutsOf(c.text))), ([c, cuts]) => {
        const out = streamed(c.text, orgSecrets, cuts);
        expect(leaked(c, out)).toBeNull();
        if (c.kind === 'harmless') expect(out).toBe(c.text);
        expect(out).toBe(streamed(c.text, orgSecrets, []));
      }),
      { numRuns: 600, seed: 10 },
    );
  });

  it('for random 1–9 character chunks of text made of token fragments, labels and escape sequences, the output is that of one write', () => {
    const piece = fc.constantFrom('ghp_', 'AKIA', 'password=', 'token: ', 'Bearer ', 'https://u:', '@h', 'eyJ', 'abcdefghij0123456789', 'QRSTUVWXYZ', '\x1b[7m', '\x1b[0m', '\r\n', ' ', '"', '-----BEGIN RSA PRIVATE KEY-----\n', '-----END RSA PRIVATE KEY-----', 'sk-', 'xoxb-', 'Zz9', '\x1b]8;;', '\x07', 'é');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 30 }), (pieces, sizes) => {
        const text = pieces.join('');
        const cuts: number[] = [];
        for (let at = 0, k = 0; at < text.length; k++) cuts.push((at += sizes[k % sizes.length]));
        expect(streamed(text, orgSecrets, cuts)).toBe(streamed(text, orgSecrets, []));
      }),
      { numRuns: 400, seed: 11 },
    );
  });

  it('for any pause pattern between writes, a secret written in pieces is masked like one written at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...corpus.cases.filter((c) => c.kind === 'secret').slice(0, 120)),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 12 }),
        async (c, pauses) => {
          const r = createStreamRedactor(DEFAULT_RULES, orgSecrets);
          const step = Math.max(1, Math.ceil(c.text.length / pauses.length));
          let out = '';
          for (let k = 0, at = 0; at < c.text.length; k++, at += step) {
            out += r.push(c.text.slice(at, at + step));
            await new Promise((res) => setTimeout(res, pauses[k % pauses.length]));
          }
          out += r.end();
          expect(leaked(c, out)).toBeNull();
          expect(out).toBe(streamed(c.text, orgSecrets, []));
        },
      ),
      { numRuns: 40, seed: 12 },
    );
  });
});

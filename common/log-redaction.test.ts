import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LogRedaction } from './log-redaction';
import { REDACTED } from './redact/index';

describe('log redaction', () => {
  it('masks known token formats always and remembered secret values from then on', () => {
    const r = new LogRedaction();
    const aws = 'AKIAIOSFODNN7EXAMPLE';
    expect(r.redact(`key ${aws} used`)).toBe(`key AKIA${REDACTED} used`);
    expect(r.redact('deploy with hunter2-the-value')).toBe('deploy with hunter2-the-value');
    r.remember(['hunter2-the-value', 'abc']);
    expect(r.redact('deploy with hunter2-the-value')).toBe(`deploy with ${REDACTED}`);
    // Too short to be a secret worth masking: left alone (see MIN_SECRET_LENGTH).
    expect(r.redact('abc')).toBe('abc');
  });

  it('install() redacts strings and buffers written to a stream', () => {
    const r = new LogRedaction();
    r.remember(['s3cr3t-value-9']);
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
    r.install(out as unknown as NodeJS.WriteStream);
    out.write('a s3cr3t-value-9 b\n');
    out.write(Buffer.from('password=s3cr3t-value-9\n'));
    expect(chunks.join('')).toBe(`a ${REDACTED} b\npassword=${REDACTED}\n`);
  });
});

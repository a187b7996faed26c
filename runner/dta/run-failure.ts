import type { DtaError } from '../../protocol';

/** A run that ends with ok=false and this error code (runDta turns it into the output). */
export class RunFailure extends Error {
  constructor(
    readonly code: DtaError['code'],
    message: string,
  ) {
    super(message);
  }
}

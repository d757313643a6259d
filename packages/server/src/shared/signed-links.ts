// Links this server hands out to its own download operations (cohort files, replay event
// files): no credentials, an HMAC-SHA256 over what the link names and its expiry with the
// data directory's link secret (link-secret.ts), valid for a while.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The answer to a link that has expired or was not made by this server. */
export const invalidLink = (renew: string) => ({ status: 403 as const, body: { code: 403, error: `This download link has expired or is not valid; ${renew}` } });

export class SignedLinks {
  constructor(
    private readonly secret: Buffer,
    private readonly clock: () => number,
  ) {}

  private signature(subject: string, expires: number): Buffer {
    return createHmac('sha256', this.secret).update(`${subject}\n${expires}`).digest();
  }

  /** `expires` and `signature` query parameters of a link to `subject` valid `validSeconds` from now. */
  sign(subject: string, validSeconds: number): URLSearchParams {
    const expires = Math.floor(this.clock() / 1000) + validSeconds;
    return new URLSearchParams({ expires: String(expires), signature: this.signature(subject, expires).toString('hex') });
  }

  /** Whether the link's signature is this server's for `subject` and it has not expired. */
  verify(subject: string, expires: number, signature: string): boolean {
    const signed = Buffer.from(signature, 'hex');
    const expected = this.signature(subject, expires);
    return signed.length === expected.length && timingSafeEqual(signed, expected) && expires * 1000 >= this.clock();
  }
}

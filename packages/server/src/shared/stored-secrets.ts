// Secret keys and deployment keys are kept as salted scrypt hashes, never recoverably: a
// leaked data directory must not let anyone read a project's events. Verifying a key runs
// scrypt (tens of ms) once per key and process; later requests compare digests.
import { hash, randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

/** One secret as stored: its hash, when it was issued and, once rotated out, until when it works. */
export interface StoredSecret {
  /**
   * The first 8 hex digits of the secret's SHA-256: names the secret in `admin list` and
   * finds a presented key's record without running scrypt (32 of the secret's 128 bits).
   */
  key_id: string;
  salt: string;
  hash: string;
  /** ms since the epoch */
  created_at: number;
  /** ms since the epoch; the secret fails from then on (absent: it does not expire) */
  expires_at?: number;
}

const HASH_BYTES = 32;
const scryptAsync = promisify(scrypt) as (secret: string, salt: Buffer, bytes: number) => Promise<Buffer>;

const keyIdOfDigest = (digest: Buffer): string => digest.toString('hex', 0, 4);

export const keyIdOf = (secret: string): string => keyIdOfDigest(hash('sha256', secret, 'buffer'));

export const newSecret = (): string => randomBytes(16).toString('hex');

export function hashSecret(secret: string, createdAt: number): StoredSecret {
  const salt = randomBytes(16);
  return { key_id: keyIdOf(secret), salt: salt.toString('base64'), hash: scryptSync(secret, salt, HASH_BYTES).toString('base64'), created_at: createdAt };
}

export const isLive = (secret: StoredSecret, now: number): boolean => secret.expires_at === undefined || now < secret.expires_at;

/**
 * The secrets that stay after a rotation at `now`: the live ones, ending at `now + graceMs`
 * at the latest, and the new one.
 */
export function rotated(secrets: StoredSecret[], fresh: StoredSecret, now: number, graceMs: number): StoredSecret[] {
  const ending = secrets.filter((s) => isLive(s, now)).map((s) => ({ ...s, expires_at: Math.min(s.expires_at ?? Infinity, now + graceMs) }));
  return [...ending.filter((s) => isLive(s, now)), fresh];
}

/** Checks presented keys against stored secrets, remembering (in memory) the digest of each key that matched. */
export class SecretVerifier {
  /** A stored hash → the SHA-256 of the key that matched it. */
  private readonly verified = new Map<string, Buffer>();

  /** Whether `presented` is one of the live `secrets` at `now`. */
  async matches(presented: string, secrets: readonly StoredSecret[], now: number): Promise<boolean> {
    const digest = hash('sha256', presented, 'buffer');
    const keyId = keyIdOfDigest(digest);
    for (const secret of secrets) {
      if (secret.key_id === keyId && isLive(secret, now) && (await this.verify(presented, digest, secret))) return true;
    }
    return false;
  }

  /** `digest`: the SHA-256 of `presented`. */
  private async verify(presented: string, digest: Buffer, secret: StoredSecret): Promise<boolean> {
    const known = this.verified.get(secret.hash);
    if (known) return timingSafeEqual(known, digest);
    const derived = await scryptAsync(presented, Buffer.from(secret.salt, 'base64'), HASH_BYTES);
    const expected = Buffer.from(secret.hash, 'base64');
    if (derived.length !== expected.length || !timingSafeEqual(derived, expected)) return false;
    this.verified.set(secret.hash, digest);
    return true;
  }
}

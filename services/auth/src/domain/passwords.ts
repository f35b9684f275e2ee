/**
 * Password hashing with argon2id at OWASP's recommended minimum (19 MiB, t=2, p=1).
 * Verification of an unknown account runs against a dummy hash so the answer and its
 * timing do not reveal whether the email exists.
 */
import * as argon2 from 'argon2';

export const ARGON2_PARAMS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export class Passwords {
  private dummy: Promise<string> | undefined;

  /** Makes the dummy hash before the first login (else the first unknown email would cost one more hash). */
  async prepare(): Promise<void> {
    await this.dummyHash();
  }

  hash(password: string): Promise<string> {
    return argon2.hash(password, ARGON2_PARAMS);
  }

  /** `hash` undefined = no such account: still spends the same work, then answers false. */
  async verify(hash: string | null | undefined, password: string): Promise<boolean> {
    if (!hash) {
      await argon2.verify(await this.dummyHash(), password).catch(() => false);
      return false;
    }
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  private dummyHash(): Promise<string> {
    return (this.dummy ??= this.hash('dummy password for timing equality'));
  }

  needsRehash(hash: string): boolean {
    return argon2.needsRehash(hash, ARGON2_PARAMS);
  }
}

import { Secret, TOTP } from 'otpauth';
import { TOTP_ISSUER, TOTP_SETTINGS } from '@payments/contracts';

/** A new TOTP secret: 160 random bits (RFC 4226's recommended length for SHA-1), in base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label,
    algorithm: TOTP_SETTINGS.algorithm,
    digits: TOTP_SETTINGS.digits,
    period: TOTP_SETTINGS.periodSeconds,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** The otpauth:// URI an authenticator app reads (as a QR code), labelled with the e-mail. */
export function totpUri(secretBase32: string, email: string): string {
  return totpOf(secretBase32, email).toString();
}

/**
 * The time step a code belongs to, within ±1 step of `now`, or undefined when it matches none. The
 * caller keeps the last step taken, so each code is used once.
 */
export function totpStep(secretBase32: string, code: string, now: Date): number | undefined {
  const timestamp = now.getTime();
  const delta = totpOf(secretBase32).validate({ token: code, timestamp, window: TOTP_SETTINGS.window });
  if (delta === null) return undefined;
  return TOTP.counter({ period: TOTP_SETTINGS.periodSeconds, timestamp }) + delta;
}

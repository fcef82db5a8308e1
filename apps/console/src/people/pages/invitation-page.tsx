/** @jsxRuntime automatic @jsxImportSource preact */
import { PASSWORD_MIN_LENGTH, type InvitationView } from '@payments/contracts';
import type { Flash } from '../../http/context';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
import type { MessageKey } from '../../views/messages';

export interface InvitationPageProps {
  invitation: InvitationView;
  /** The otpauth URI as a QR code image (a data: URL, allowed by the CSP's img-src). */
  qrDataUrl: string;
  /** The form posts back to the page's own address. */
  action: string;
  flash?: readonly Flash[];
  /** The gateway's refusal of the last try, and the name typed then (never the password or code). */
  error?: string;
  name?: string;
}

/** The role as the catalog names it. */
export function roleKey(role: string): MessageKey {
  return role === 'tenant_admin' ? 'role.tenant_admin' : role === 'operator' ? 'role.operator' : 'role.tenant_viewer';
}

/**
 * An invitation opened from its link: whom it is for, the TOTP secret (QR code and key) to set up an
 * authenticator, then name, password and a first code. No session: the link is the proof, used once.
 */
export function InvitationPage({ invitation, qrDataUrl, action, flash, error, name }: InvitationPageProps) {
  const { t, dateTime } = useFormats();
  return (
    <Layout title={t('invitation.title')} flash={flash}>
      <h1>{t('invitation.title')}</h1>
      <p id="invitation-for">
        {t('invitation.for', { email: invitation.email, role: t(roleKey(invitation.role)) })}{' '}
        {invitation.tenant_name !== null && t('invitation.tenant', { tenant: invitation.tenant_name })}{' '}
        {t('invitation.expires', { at: dateTime(invitation.expires_at) })}
      </p>
      <div class="grid2">
        <section>
          <h2>{t('invitation.totpHeading')}</h2>
          <p class="muted">{t('invitation.totpHint')}</p>
          <img id="totp-qr" src={qrDataUrl} alt={t('invitation.qrAlt')} width={220} height={220} />
          <p>
            {t('invitation.totpSecret')}:{' '}
            <code class="mono" id="totp-secret">
              {invitation.totp_secret}
            </code>
          </p>
        </section>
        <section>
          <h2>{t('invitation.formHeading')}</h2>
          <form method="post" action={action} class="stack" id="accept-invitation">
            {error !== undefined && <p class="flash error">{error}</p>}
            <label>
              {t('invitation.name')}
              <input name="name" type="text" autocomplete="name" required maxLength={200} value={name} />
            </label>
            <label>
              {t('invitation.password', { min: PASSWORD_MIN_LENGTH })}
              <input
                name="password"
                type="password"
                autocomplete="new-password"
                required
                minLength={PASSWORD_MIN_LENGTH}
              />
            </label>
            <label>
              {t('invitation.totp')}
              <input
                name="totp"
                type="text"
                inputmode="numeric"
                pattern="[0-9]{6}"
                maxLength={6}
                autocomplete="one-time-code"
                required
              />
            </label>
            <button type="submit">{t('invitation.submit')}</button>
          </form>
        </section>
      </div>
    </Layout>
  );
}

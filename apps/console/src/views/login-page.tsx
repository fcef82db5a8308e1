/** @jsxRuntime automatic @jsxImportSource preact */
import type { Flash } from '../http/context';
import { Layout } from './layout';
import { useFormats } from './locale';

/** The sign-in forms: `password` for everyone; `tenant` and `operator` only in development. */
export type LoginForm = 'password' | 'tenant' | 'operator';

export interface LoginPageProps {
  flash?: readonly Flash[];
  /** Where to go once signed in (a console path). */
  next?: string;
  /** Which form the error belongs to. */
  error?: { form: LoginForm; text: string };
  /** The e-mail typed before a refusal (never the password or the code). */
  email?: string;
  /** Development: also the integration-token and operator-credential forms (docs/console.md). */
  developmentSignIns: boolean;
}

/**
 * People sign in as themselves: e-mail, password and the authenticator's code. In development the
 * older ways in stay beside it: a tenant's integration token and an operator's `opk_` credential.
 */
export function LoginPage({ flash, next, error, email, developmentSignIns }: LoginPageProps) {
  const { t } = useFormats();
  const nextField = next && <input type="hidden" name="next" value={next} />;
  return (
    <Layout title={t('login.title')} flash={flash}>
      <h1>{t('login.title')}</h1>
      <section>
        <h2>{t('login.people.heading')}</h2>
        <form method="post" action="/login" class="stack" id="password-login">
          {error?.form === 'password' && <p class="flash error">{error.text}</p>}
          <label>
            {t('login.email')}
            <input name="email" type="email" autocomplete="username" required value={email} />
          </label>
          <label>
            {t('login.password')}
            <input name="password" type="password" autocomplete="current-password" required />
          </label>
          <label>
            {t('login.totp')}
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
          {nextField}
          <button type="submit">{t('login.submit')}</button>
          <p class="muted">{t('login.people.hint')}</p>
        </form>
      </section>
      {developmentSignIns && (
        <section>
          <h2>{t('login.dev.heading')}</h2>
          <div class="grid2">
            <form method="post" action="/login/tenant" class="stack" id="tenant-login">
              <h3>{t('login.tenant.heading')}</h3>
              {error?.form === 'tenant' && <p class="flash error">{error.text}</p>}
              <label>
                {t('login.tenant.token')}
                <input name="token" type="password" autocomplete="off" required placeholder="itk_..." />
              </label>
              {nextField}
              <button type="submit">{t('login.tenant.submit')}</button>
            </form>
            <form method="post" action="/login/operator" class="stack" id="operator-login">
              <h3>{t('login.operator.heading')}</h3>
              {error?.form === 'operator' && <p class="flash error">{error.text}</p>}
              <label>
                {t('login.operator.credential')}
                <input name="credential" type="password" autocomplete="off" required placeholder="opk_..." />
              </label>
              {nextField}
              <button type="submit">{t('login.operator.submit')}</button>
              <p class="muted">
                {t('login.operator.madeWith')} <span class="mono">npm run admin -- operator create --name X</span>.
              </p>
            </form>
          </div>
        </section>
      )}
    </Layout>
  );
}

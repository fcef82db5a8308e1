/** @jsxRuntime automatic @jsxImportSource preact */
import type { Flash } from '../http/context';
import { Layout } from './layout';

export interface LoginPageProps {
  flash?: readonly Flash[];
  /** Where to go once signed in (a console path). */
  next?: string;
  /** Which form the error belongs to. */
  error?: { form: 'tenant' | 'operator'; text: string };
}

/** Two ways in: a tenant's integration token, or an operator credential. */
export function LoginPage({ flash, next, error }: LoginPageProps) {
  return (
    <Layout title="Log in" flash={flash}>
      <h1>Log in</h1>
      <div class="grid2">
        <section>
          <h2>Tenant</h2>
          <form method="post" action="/login/tenant" class="stack" id="tenant-login">
            {error?.form === 'tenant' && <p class="flash error">{error.text}</p>}
            <label>
              Integration token
              <input name="token" type="password" autocomplete="off" required placeholder="itk_..." />
            </label>
            {next && <input type="hidden" name="next" value={next} />}
            <button type="submit">Log in as tenant</button>
            <p class="muted">The token is exchanged for a short-lived session; the console does not keep it.</p>
          </form>
        </section>
        <section>
          <h2>Operator</h2>
          <form method="post" action="/login/operator" class="stack" id="operator-login">
            {error?.form === 'operator' && <p class="flash error">{error.text}</p>}
            <label>
              Operator credential
              <input name="credential" type="password" autocomplete="off" required placeholder="opk_..." />
            </label>
            {next && <input type="hidden" name="next" value={next} />}
            <button type="submit">Log in as operator</button>
            <p class="muted">
              Made with <span class="mono">npm run admin -- operator create --name X</span>.
            </p>
          </form>
        </section>
      </div>
    </Layout>
  );
}

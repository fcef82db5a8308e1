/** @jsxRuntime automatic @jsxImportSource preact */
import QRCode from 'qrcode';
import { consoleInvitationPagePath, INVITATION_TOKEN_PATTERN } from '@payments/contracts';
import { GatewayError } from '../gateway/problem';
import type { ConsoleContext } from '../http/context';
import { NotFoundError } from '../http/errors';
import { readForm, single } from '../http/form';
import { render } from '../views/render';
import { text } from './handler-kit';
import { InvitationPage } from './pages/invitation-page';
import type { PeopleRouteDeps } from './routes';

const INVITATION_TOKEN = new RegExp(INVITATION_TOKEN_PATTERN);

/** GET /invitations/:token: the invitation, with the QR code of its authenticator secret. */
export async function invitationPage(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  await renderInvitation(ctx, deps, tokenOf(ctx));
}

/** POST /invitations/:token: accepts it, then to the login page; a refusal shows the page again. */
export async function acceptInvitation(deps: PeopleRouteDeps, ctx: ConsoleContext): Promise<void> {
  const token = tokenOf(ctx);
  const form = await readForm(ctx);
  const name = single(form.get('name'))?.trim() ?? '';
  const body = { name, password: single(form.get('password')) ?? '', totp: single(form.get('totp'))?.trim() ?? '' };
  try {
    const accepted = await deps.people.accept(ctx, token, body);
    deps.flash(ctx, 'info', text(ctx, 'invitation.accepted', { email: accepted.email }));
    ctx.redirect('/login');
  } catch (err) {
    // A wrong code or a short password: the same page again, the gateway naming the field.
    if (err instanceof GatewayError && (err.status === 400 || err.status === 422))
      return renderInvitation(ctx, deps, token, { error: refusalText(err), name }, err.status);
    throw err;
  }
}

async function renderInvitation(
  ctx: ConsoleContext,
  deps: PeopleRouteDeps,
  token: string,
  retry: { error?: string; name?: string } = {},
  status = 200,
): Promise<void> {
  const invitation = await deps.people.invitation(ctx, token).catch((err: unknown) => {
    if (err instanceof GatewayError && err.status === 404) throw new NotFoundError(text(ctx, 'invitation.gone'));
    throw err;
  });
  // An SVG as a data: URL: drawn on the server, shown under the CSP (img-src data:), no script.
  const svg = await QRCode.toString(invitation.otpauth_uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  const qrDataUrl = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
  render(
    ctx,
    <InvitationPage
      invitation={invitation}
      qrDataUrl={qrDataUrl}
      action={consoleInvitationPagePath(token)}
      flash={ctx.state.flash}
      {...retry}
    />,
    status,
  );
}

/** An invitation token of the right shape; any other is not found without asking the gateway. */
function tokenOf(ctx: ConsoleContext): string {
  const token = ctx.params.token ?? '';
  if (!INVITATION_TOKEN.test(token)) throw new NotFoundError(text(ctx, 'invitation.gone'));
  return token;
}

/** A refusal's detail with the fields it names ("totp: wrong code"). */
function refusalText(err: GatewayError): string {
  const fields = (err.problem.errors ?? []).map((e) => `${(e.path ?? '').replace(/^\//, '')}: ${e.message ?? ''}`);
  return fields.length > 0 ? fields.join('; ') : (err.problem.detail ?? err.message);
}

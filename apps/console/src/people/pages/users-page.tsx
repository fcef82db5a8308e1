/** @jsxRuntime automatic @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { ConsoleUser, NewInvitation, TenantRole } from '@payments/contracts';
import type { Flash } from '../../http/context';
import type { Session } from '../../session/session';
import { Layout } from '../../views/layout';
import { useFormats } from '../../views/locale';
import { roleKey } from './invitation-page';

export interface PeoplePageFrame {
  session: Session;
  flash: readonly Flash[];
  path: string;
}

export interface UsersPageProps {
  page: PeoplePageFrame;
  title: string;
  users: readonly ConsoleUser[];
  /** Where the invite form posts. */
  inviteAction: string;
  /** The roles the invite offers (tenant users); none for operators. */
  roles?: readonly TenantRole[];
  /** The revoke form's address of a user. */
  revokeAction(userId: string): string;
  children?: ComponentChildren;
}

/** A list of people with their role and state, a revoke button each, and the invite form. */
export function UsersPage({ page, title, users, inviteAction, roles, revokeAction, children }: UsersPageProps) {
  const { t, dateTime } = useFormats();
  return (
    <Layout title={title} session={page.session} flash={page.flash} path={page.path}>
      <h1>{title}</h1>
      {users.length === 0 ? (
        <p class="muted">{t('users.none')}</p>
      ) : (
        <table id="users">
          <thead>
            <tr>
              <th>{t('users.col.name')}</th>
              <th>{t('users.col.email')}</th>
              <th>{t('users.col.role')}</th>
              <th>{t('users.col.created')}</th>
              <th>{t('users.col.lastSignIn')}</th>
              <th>{t('users.col.state')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {users.map((user) => (
              <tr data-user-id={user.user_id}>
                <td>{user.name}</td>
                <td class="mono">{user.email}</td>
                <td>{t(roleKey(user.role))}</td>
                <td>{dateTime(user.created_at)}</td>
                <td>{dateTime(user.last_sign_in_at)}</td>
                <td>
                  {user.revoked_at === null
                    ? t('users.active')
                    : t('users.revokedAt', { at: dateTime(user.revoked_at) })}
                </td>
                <td>
                  {user.revoked_at === null && (
                    <form method="post" action={revokeAction(user.user_id)} class="inline">
                      <button type="submit" class="secondary">
                        {t('users.revoke')}
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>{t('users.invite.heading')}</h2>
      <form method="post" action={inviteAction} class="stack" id="invite">
        <label>
          {t('users.invite.email')}
          <input name="email" type="email" required maxLength={254} />
        </label>
        {roles && (
          <label>
            {t('users.invite.role')}
            <select name="role" required>
              {roles.map((role) => (
                <option value={role}>{t(roleKey(role))}</option>
              ))}
            </select>
          </label>
        )}
        <button type="submit">{t('users.invite.submit')}</button>
        <p class="muted">{t('users.invite.hint')}</p>
      </form>
      {children}
    </Layout>
  );
}

export interface InvitedPageProps {
  page: PeoplePageFrame;
  invitation: NewInvitation;
  /** The absolute link to the invitation page: shown this once. */
  link: string;
  back: string;
}

/** The answer to an invitation: its one-time link, never shown again. */
export function InvitedPage({ page, invitation, link, back }: InvitedPageProps) {
  const { t, dateTime } = useFormats();
  return (
    <Layout title={t('users.invited.title')} session={page.session} flash={page.flash} path={page.path}>
      <h1>{t('users.invited.title')}</h1>
      <p>{t('users.invited.once', { email: invitation.email, until: dateTime(invitation.expires_at) })}</p>
      <p>
        <code class="mono" id="invitation-link">
          {link}
        </code>
      </p>
      <p>
        <a href={back}>{t('users.invited.back')}</a>
      </p>
    </Layout>
  );
}

import type { NavItem } from '../views/layout';

/** The operator's navigation (the layout shows it to an operator session), in the page's language. */
export const OPERATOR_NAV: readonly NavItem[] = [
  { href: '/operator/dashboard', label: 'Dashboard', key: 'operator.dashboard.title' },
  { href: '/operator/tenants', label: 'Tenants', key: 'operator.tenants.title' },
  { href: '/operator/health', label: 'Health', key: 'operator.health.title' },
  { href: '/operator/dead-letters', label: 'Dead letters', key: 'operator.deadLetters.title' },
  { href: '/operator/audit', label: 'Audit log', key: 'operator.audit.title' },
  { href: '/operator/users', label: 'Users', key: 'layout.nav.users' },
];

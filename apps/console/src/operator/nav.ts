/** The operator's navigation (the layout shows it to an operator session). */
export const OPERATOR_NAV: ReadonlyArray<{ href: string; label: string }> = [
  { href: '/operator/dashboard', label: 'Dashboard' },
  { href: '/operator/tenants', label: 'Tenants' },
  { href: '/operator/health', label: 'Health' },
  { href: '/operator/dead-letters', label: 'Dead letters' },
  { href: '/operator/audit', label: 'Audit log' },
  { href: '/operator/users', label: 'Users' },
];

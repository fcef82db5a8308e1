/** The operator's navigation (the layout shows it to an operator session). */
export const OPERATOR_NAV: ReadonlyArray<{ href: string; label: string }> = [{ href: '/operator', label: 'Operator' }];

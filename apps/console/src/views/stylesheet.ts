import { createHash } from 'node:crypto';

/**
 * The console's one stylesheet, served from /static/console-<hash>.css (CSP style-src 'self': no
 * inline style anywhere). Kept in a module rather than a .css file so the built app carries it.
 */
export const STYLESHEET = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #f6f7f9; --accent: #2457c5;
  --ok: #1f7a3f; --bad: #b3261e; --warn: #8a5a00; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); font-size: 15px; line-height: 1.45; }
header.top { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #fff;
  border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
header.top nav { display: flex; gap: 16px; flex: 1; }
header.top nav a { color: var(--muted); text-decoration: none; padding: 4px 0; }
header.top nav a.current { color: var(--accent); border-bottom: 2px solid var(--accent); }
header.top .who { color: var(--muted); font-size: 13px; display: flex; gap: 12px; align-items: center; }
main { max-width: 1200px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 4px 0 16px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
a { color: var(--accent); }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.mono, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; word-break: break-all; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 18px; background: #fff;
  border: 1px solid var(--line); padding: 14px 18px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
form.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-end; background: #fff;
  border: 1px solid var(--line); padding: 12px 14px; margin-bottom: 16px; }
form.filters label, form.stack label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); gap: 3px; }
form.stack { display: flex; flex-direction: column; gap: 12px; max-width: 420px; background: #fff;
  border: 1px solid var(--line); padding: 18px; }
form.inline { display: inline; }
input, select { font: inherit; padding: 5px 8px; border: 1px solid #b9c0cc; border-radius: 4px; background: #fff; color: var(--fg); }
button { font: inherit; padding: 6px 14px; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.flash { padding: 9px 14px; border-radius: 4px; margin-bottom: 14px; border: 1px solid; }
.flash.info { background: #eaf5ee; border-color: #9fd0ae; color: var(--ok); }
.flash.error { background: #fbeceb; border-color: #e5aaa6; color: var(--bad); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; background: #eceff3; color: var(--muted); }
.badge.delivered, .badge.paid, .badge.registered, .badge.active, .badge.approved, .badge.aprovada { background: #e2f3e8; color: var(--ok); }
.badge.dead, .badge.failed, .badge.registration_failed, .badge.disabled, .badge.cancelled,
  .badge.rejected, .badge.rejeitada, .badge.cancelada { background: #fbe3e1; color: var(--bad); }
.badge.pending, .badge.retrying, .badge.pending_registration, .badge.pendente { background: #fff4db; color: var(--warn); }
.muted { color: var(--muted); }
pre.payload { background: #fff; border: 1px solid var(--line); padding: 12px 14px; overflow-x: auto; white-space: pre-wrap; margin: 0; }
.error-text { color: var(--bad); white-space: pre-wrap; word-break: break-word; }
pre.excerpt { background: #fff; border: 1px solid var(--line); padding: 4px 6px; margin: 0; font-size: 12px;
  max-width: 36em; max-height: 6.5em; overflow: auto; white-space: pre-wrap; word-break: break-all; }
.pager { display: flex; gap: 12px; margin-top: 12px; }
.actions { display: flex; gap: 10px; flex-wrap: wrap; margin: 12px 0; }
.problem { background: #fff; border: 1px solid var(--line); padding: 16px 20px; }
.problem ul { margin: 8px 0 0; }
.panel { background: #fff; border: 1px solid var(--line); padding: 14px 18px; margin-bottom: 16px; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
svg.chart { background: #fff; border: 1px solid var(--line); max-width: 100%; height: auto; }
svg.chart text { font-size: 11px; fill: var(--muted); }
svg.chart text.chart-title { font-size: 14px; font-weight: 600; fill: var(--fg); }
svg.chart text.chart-empty { font-size: 13px; }
.charts { display: flex; flex-direction: column; gap: 14px; }
dl.totals { margin-bottom: 14px; }
tr.health-bad td { background: #fdf1f0; }
tr.health-warn td { background: #fff9eb; }
`;

export const STYLESHEET_PATH = `/static/console-${createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 10)}.css`;

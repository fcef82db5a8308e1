/**
 * The charts' colours, as SVG presentation attributes (fill/stroke; the CSP forbids style
 * attributes). Outcomes keep one colour everywhere: good green, failed orange, dead or refused red.
 */
export const ChartColors = {
  good: '#2e7d32',
  failed: '#ef6c00',
  dead: '#c62828',
  p50: '#1565c0',
  p99: '#8e24aa',
} as const;

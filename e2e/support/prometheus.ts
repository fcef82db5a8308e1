/** One series of a Prometheus text exposition. */
export interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text format (enough for tests: no escaped quotes in label values). */
export function parseMetrics(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    series.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return series;
}

/** The series of `name` whose labels include `labels`. */
export function findSeries(all: Series[], name: string, labels: Record<string, string> = {}): Series[] {
  return all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

export async function scrape(baseUrl: string): Promise<Series[]> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${baseUrl}/metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}

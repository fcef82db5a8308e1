import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadBankSandboxConfig } from '@payments/bank-sandbox';
import { loadBookletConfig } from '@payments/booklet-svc';
import { loadCallbackConfig } from '@payments/callback-svc';
import { loadClientsConfig } from '@payments/clients-svc';
import { loadCommonConfig } from '@payments/config';
import { loadConsoleConfig } from '@payments/console';
import { loadGatewayConfig } from '@payments/gateway';
import { loadReceivablesConfig } from '@payments/receivables-svc';
import { loadOptions } from '@payments/scripts/demo/options';
import { loadStartSettings } from '@payments/scripts/start/settings';

/**
 * docs/configuration.md against the code, so that the reference cannot drift:
 * - every loader runs with an environment that records each variable it reads: the variables of its
 *   section of the reference (less those of "Every service", which each service reads too) must be
 *   exactly those it reads, no more, no fewer;
 * - every default the reference states as a value (a Default cell that starts with `code`) is the
 *   loader's: setting the variable to it changes nothing in what the loader returns;
 * - every variable a source file reads directly (process.env.NAME, env.NAME, env['NAME'],
 *   envInt('NAME', ...)) in apps, libs, scripts, bench and e2e is in the reference, and every variable
 *   in the reference is named in some source file.
 * No system is started: loaders are pure functions of the environment they are given.
 */

const root = join(__dirname, '..', '..');
const REFERENCE = 'docs/configuration.md';

type Env = Record<string, string | undefined>;

/** The section of the reference each loader answers to (its `## ` heading). */
const COMMON_SECTION = 'Every service';
const LOADERS: Record<string, (env: Env) => unknown> = {
  [COMMON_SECTION]: loadCommonConfig,
  gateway: loadGatewayConfig,
  'clients-svc': loadClientsConfig,
  'receivables-svc': loadReceivablesConfig,
  'booklet-svc': loadBookletConfig,
  'callback-svc': loadCallbackConfig,
  'bank-sandbox': loadBankSandboxConfig,
  console: loadConsoleConfig,
  '`npm start`': loadStartSettings,
  '`npm run demo`': (env) => loadOptions([], env),
};

/** Read from the environment but no setting of ours (e2e looks for nats-server on it). */
const NOT_SETTINGS = new Set(['PATH']);

interface Row {
  variable: string;
  /** The stated default when it is a value (a cell starting with `code`), else undefined. */
  value: string | undefined;
}

/** The variables of each `## ` section of the reference, one table row each. */
function readReference(): Map<string, Row[]> {
  const sections = new Map<string, Row[]>();
  let rows: Row[] = [];
  for (const line of readFileSync(join(root, REFERENCE), 'utf8').split('\n')) {
    const heading = /^## (.+)$/.exec(line);
    if (heading) sections.set(heading[1].trim(), (rows = []));
    const row = /^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|([^|]*)\|/.exec(line);
    if (row) rows.push({ variable: row[1], value: /^\s*`([^`]*)`/.exec(row[2])?.[1] });
  }
  return sections;
}

/** Runs `load` with `env`, returning every variable it looked up. */
function readsOf(load: (env: Env) => unknown, env: Env = {}): Set<string> {
  const names = new Set<string>();
  load(
    new Proxy(env, {
      get(target, key) {
        if (typeof key === 'string') names.add(key);
        return typeof key === 'string' ? target[key] : undefined;
      },
    }),
  );
  return names;
}

/**
 * What `load` reads with nothing set, and with every value the reference states set (a variable read
 * only when another one is set shows then).
 */
function allReadsOf(load: (env: Env) => unknown, reference: Map<string, Row[]>): Set<string> {
  const stated: Env = {};
  for (const rows of reference.values()) for (const r of rows) if (r.value !== undefined) stated[r.variable] = r.value;
  return new Set([...readsOf(load), ...readsOf(load, stated)]);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist', 'coverage'].includes(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) ? [path] : [];
  });
}

const DIRECT_READS = [
  /\benv\.([A-Z][A-Z0-9_]+)\b/g,
  /\benv\[\s*['"`]([A-Z][A-Z0-9_]+)['"`]\s*\]/g,
  /\benv(?:String|Optional|Int|Bool|Enum|IntList)\(\s*['"`]([A-Z][A-Z0-9_]+)['"`]/g,
];

const reference = readReference();
const documented = new Set([...reference.values()].flat().map((r) => r.variable));
const sources = ['apps', 'libs', 'scripts', 'bench', 'e2e']
  .flatMap((dir) => sourceFiles(join(root, dir)))
  .filter((path) => path !== __filename)
  .map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));

it('has a section for every loader', () => {
  expect(Object.keys(LOADERS).filter((section) => !reference.has(section))).toEqual([]);
});

describe.each(Object.entries(LOADERS))('%s', (section, load) => {
  it(`lists exactly the variables its loader reads (${REFERENCE})`, () => {
    const common = section === COMMON_SECTION ? new Set<string>() : allReadsOf(loadCommonConfig, reference);
    const read = [...allReadsOf(load, reference)].filter((name) => !common.has(name)).sort();
    const listed = (reference.get(section) ?? []).map((r) => r.variable).sort();
    expect({ section, variables: listed }).toEqual({ section, variables: read });
  });

  it('states the loader’s own defaults', () => {
    const unset = load({});
    // Set to its stated default, a variable changes nothing; a wrong default changes some fields.
    const wrong = (reference.get(section) ?? []).flatMap(({ variable, value }) => {
      if (value === undefined) return [];
      const changed = differences(load({ [variable]: value }), unset);
      return changed.length === 0 ? [] : [`${variable}=${value} changes ${changed.join(', ')}`];
    });
    expect(wrong).toEqual([]);
  });
});

/** Paths of the fields where two loaded configurations differ. */
function differences(a: unknown, b: unknown, path = 'config'): string[] {
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`),
    );
  }
  return Object.is(a, b) ? [] : [path];
}

it('lists every variable a source file reads directly', () => {
  const missing = new Map<string, string>();
  for (const { path, text } of sources)
    for (const pattern of DIRECT_READS)
      for (const [, name] of text.matchAll(pattern))
        if (!documented.has(name) && !NOT_SETTINGS.has(name) && !missing.has(name)) missing.set(name, path);
  expect(Object.fromEntries(missing)).toEqual({});
});

it('lists no variable that no source file names', () => {
  const corpus = sources.map((s) => s.text).join('\n');
  expect([...documented].filter((name) => !new RegExp(`\\b${name}\\b`).test(corpus))).toEqual([]);
});

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** Helpers of kubernetes.test.ts: render an overlay, find objects, resolve a container's environment. */

export const KUSTOMIZE_ROOT = join(__dirname, '..', 'kubernetes');

export type Env = Record<string, string | undefined>;

/** The few fields of a rendered object the checks read; everything else stays `unknown`. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: { name: string; key: string };
    secretKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}

export interface Probe {
  httpGet?: { path: string; port: number | string };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
}

export interface KeyToPath {
  key: string;
  path: string;
}

export interface Volume {
  name: string;
  configMap?: { name: string; items?: KeyToPath[] };
  secret?: { secretName: string; items?: KeyToPath[] };
  projected?: { sources: { secret?: { name: string; items?: KeyToPath[] } }[] };
  emptyDir?: Record<string, unknown>;
}

export interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[]; initContainers?: Container[]; volumes?: Volume[] };
}

/** Whether `kubectl` runs here (kubectl kustomize is kustomize v5). */
export function kubectlAvailable(): boolean {
  const run = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
  return run.error === undefined && run.status === 0;
}

/** `kubectl kustomize <overlay>`, parsed: every object it renders. */
export function render(overlay: string): K8sObject[] {
  const run = spawnSync('kubectl', ['kustomize', join(KUSTOMIZE_ROOT, 'overlays', overlay)], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`kubectl kustomize ${overlay} failed: ${run.stderr}`);
  return parseAllDocuments(run.stdout)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${overlay}: ${doc.errors[0].message}`);
      return doc.toJS() as K8sObject;
    })
    .filter((o) => o !== null);
}

export function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function named(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
}

/** The object's spec, typed by the caller (the schema check has already vouched for its shape). */
export function specOf<T>(object: K8sObject): T {
  return object.spec as T;
}

/** Data of a ConfigMap, or the decoded data of a Secret. */
export function dataOf(object: K8sObject): Record<string, string> {
  const data = (object.data ?? {}) as Record<string, string>;
  if (object.kind !== 'Secret') return data;
  const decoded = Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]);
  return { ...Object.fromEntries(decoded), ...((object.stringData ?? {}) as Record<string, string>) };
}

export function matches(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case 'In':
        return key in labels && values.includes(labels[key]);
      case 'NotIn':
        return !(key in labels) || !values.includes(labels[key]);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
    }
  });
  return byLabels && byExpressions;
}

/**
 * A container's environment as Kubernetes would give it: envFrom first, then env; each reference
 * must name a rendered ConfigMap or Secret and a key it has. `secrets` maps a Secret's name to the
 * values to use (the rendered ones are empty in git). With the workload, the files its Secret volumes
 * put under the container's mounts are written to a temporary folder, and each variable whose value
 * is the path of one of them (a `*_FILE` setting) names that copy instead.
 */
export function containerEnv(
  container: Container,
  objects: K8sObject[],
  secrets: (secret: K8sObject) => Record<string, string>,
  workload?: K8sObject,
): Env {
  const env = plainEnv(container, objects, secrets);
  if (!workload) return env;
  const files = mountedSecretFiles(workload, container, objects, secrets);
  const dir = mkdtempSync(join(filesRoot(), `${container.name}-`));
  for (const [name, value] of Object.entries(env)) {
    const text = value === undefined ? undefined : files.get(value);
    if (text === undefined || value === undefined) continue;
    const copy = join(dir, value);
    mkdirSync(dirname(copy), { recursive: true });
    writeFileSync(copy, text);
    env[name] = copy;
  }
  return env;
}

let root: string | undefined;
/** One temporary folder for the run's secret files, removed when the process exits. */
function filesRoot(): string {
  if (root === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'k8s-secret-files-'));
    root = made;
    process.on('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  return root;
}

/**
 * The files a container sees through its Secret and projected-Secret volumes, by absolute path: each
 * item's key of the named Secret (every key without items), under the mount's path. A missing Secret
 * or key throws, as the kubelet would not start the pod.
 */
export function mountedSecretFiles(
  workload: K8sObject,
  container: Container,
  objects: K8sObject[],
  secrets: (secret: K8sObject) => Record<string, string>,
): Map<string, string> {
  const volumes = podTemplateOf(workload).spec.volumes ?? [];
  const files = new Map<string, string>();
  for (const mount of container.volumeMounts ?? []) {
    const volume = volumes.find((v) => v.name === mount.name);
    if (!volume) throw new Error(`${container.name} mounts ${mount.name}, which the pod does not declare`);
    const sources = [
      ...(volume.secret ? [{ name: volume.secret.secretName, items: volume.secret.items }] : []),
      ...(volume.projected?.sources ?? []).flatMap((s) => (s.secret ? [s.secret] : [])),
    ];
    for (const { name, items } of sources) {
      const values = secrets(named(objects, 'Secret', name));
      for (const { key, path } of items ?? Object.keys(values).map((k) => ({ key: k, path: k }))) {
        if (!(key in values)) throw new Error(`${container.name}: Secret ${name} has no key ${key}`);
        files.set(`${mount.mountPath}/${path}`, values[key]);
      }
    }
  }
  return files;
}

function plainEnv(
  container: Container,
  objects: K8sObject[],
  secrets: (secret: K8sObject) => Record<string, string>,
): Env {
  const source = (kind: 'ConfigMap' | 'Secret', name: string) => {
    const object = named(objects, kind, name);
    return kind === 'Secret' ? secrets(object) : dataOf(object);
  };
  const key = (kind: 'ConfigMap' | 'Secret', ref: { name: string; key: string }) => {
    const values = source(kind, ref.name);
    if (!(ref.key in values)) throw new Error(`${container.name}: ${kind} ${ref.name} has no key ${ref.key}`);
    return values[ref.key];
  };
  const env: Env = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, source('ConfigMap', from.configMapRef.name));
    if (from.secretRef) Object.assign(env, source('Secret', from.secretRef.name));
  }
  for (const { name, value, valueFrom } of container.env ?? []) {
    if (valueFrom?.configMapKeyRef) env[name] = key('ConfigMap', valueFrom.configMapKeyRef);
    else if (valueFrom?.secretKeyRef) env[name] = key('Secret', valueFrom.secretKeyRef);
    else if (valueFrom?.fieldRef)
      env[name] = 'from-the-pod'; // e.g. metadata.name
    else env[name] = value ?? '';
  }
  return env;
}

export function podTemplateOf(workload: K8sObject): PodTemplate {
  return specOf<{ template: PodTemplate }>(workload).template;
}

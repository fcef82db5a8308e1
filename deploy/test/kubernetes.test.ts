import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { loadBankSandboxConfig } from '@payments/bank-sandbox';
import { loadBookletConfig } from '@payments/booklet-svc';
import { loadCallbackConfig } from '@payments/callback-svc';
import { loadClientsConfig } from '@payments/clients-svc';
import { loadCommonConfig } from '@payments/config';
import { claimStoreRecipients, JobStreams } from '@payments/contracts';
import { loadConsoleConfig } from '@payments/console';
import { loadGatewayConfig } from '@payments/gateway';
import { HEALTHZ_PATH, READYZ_PATH } from '@payments/health';
import { loadReceivablesConfig } from '@payments/receivables-svc';
import { topologyOf } from '@payments/bus';
import { CrdSchemas } from './crd-schemas';
import { KnownFields } from './known-fields';
import {
  containerEnv,
  dataOf,
  kubectlAvailable,
  matches,
  mountedSecretFiles,
  named,
  ofKind,
  podTemplateOf,
  render,
  specOf,
  type Container,
  type Env,
  type K8sObject,
  type LabelSelector,
  type PodTemplate,
} from './manifests';

/**
 * deploy/kubernetes, rendered with `kubectl kustomize` (no cluster) and checked:
 * - every core object against the Kubernetes schemas (kubernetes-models' validators), with no field
 *   its kind does not declare (kubernetes-models' types, read by the TypeScript checker: known-fields.ts);
 *   CloudNativePG's objects for shape;
 * - every app's container environment, resolved from its ConfigMaps and Secrets, is read by that app's
 *   config loader (a recording proxy around the environment, as e2e/test/configuration-reference.test.ts
 *   does), and the loader accepts it in production (its requireProductionSecrets), pointing nowhere at
 *   loopback;
 * - every selector (Service, PDB, NetworkPolicy, workload) matches the pods of some Deployment or
 *   StatefulSet, every HPA scales a rendered Deployment, probes hit a declared port: the app's own;
 * - NATS: the servers the apps are given are the StatefulSet's pods, STREAM_REPLICAS is its size, and
 *   nats-server accepts the config its pods render (deploy/nats's bus users with the Secret's passwords);
 * - the console: it reaches the gateway's public and admin ports through their Services and nothing
 *   else, only its pods are admitted to the admin port (no other pod, namespace, address or Ingress),
 *   and its Ingress serves it over TLS on a host of its own.
 */

/** What the checks read of a loaded config: the port the app listens on, and the gateway's admin port. */
type Loader = (env: Env) => { nodeEnv: string; port: number; adminPort?: number };

/** Each app's Deployment name, and the loader of its settings. */
const LOADERS: Record<string, Loader> = {
  gateway: loadGatewayConfig,
  'clients-svc': loadClientsConfig,
  'receivables-svc': loadReceivablesConfig,
  'booklet-svc': loadBookletConfig,
  'callback-svc': loadCallbackConfig,
  console: loadConsoleConfig,
  'bank-sandbox': loadBankSandboxConfig,
};

/** The apps every overlay deploys: the services and the console. */
const SYSTEM = ['gateway', 'clients-svc', 'receivables-svc', 'booklet-svc', 'callback-svc', 'console'];

/** Each overlay, with the apps it must deploy. */
const OVERLAYS: Record<string, string[]> = {
  production: SYSTEM,
  sandbox: [...SYSTEM, 'bank-sandbox'],
  'production-cnpg': SYSTEM,
};

/** Variables an app reads outside its loader: libs/telemetry's (docs/configuration.md, "OpenTelemetry"). */
const TELEMETRY_SECTION = 'OpenTelemetry (every app)';

// The kinds kubernetes-models' schemas cover; the custom kinds are checked against deploy/schemas' CRDs.
type Model = new (data: never) => { validate(): void };
const MODELS: Record<string, Model> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/** The apps whose queue lag drives their scaling (KEDA), and the HTTP-facing one scaled on CPU. */
const QUEUE_WORKERS = ['receivables-svc', 'callback-svc', 'booklet-svc'];

/** Each service's Postgres schema: it logs in as `<schema>_svc` (docs/architecture.md). */
const SCHEMAS: Record<string, string> = {
  gateway: 'gateway',
  'clients-svc': 'clients',
  'receivables-svc': 'receivables',
  'booklet-svc': 'booklets',
  'callback-svc': 'callbacks',
  'bank-sandbox': 'bank_sandbox',
};

/** Where secrets are mounted in every pod that has them (the `*_FILE` settings name files there). */
const SECRETS_DIR = '/var/run/secrets/payments';

const repoRoot = join(__dirname, '..', '..');
/** The values exampleSecrets gave, so that every reference to a key sees the same one. */
const exampleValues = new Map<string, string>();
const kubectl = kubectlAvailable();

if (!kubectl) {
  if (process.env.CI) {
    it('renders the Kubernetes manifests (kubectl is required in CI)', () => {
      throw new Error('kubectl not found: CI must have it (kubectl kustomize renders deploy/kubernetes); see .ci/run');
    });
  } else {
    console.warn('deploy/test/kubernetes.test.ts skipped: kubectl not found (CI=true makes this a failure)');
    it.skip('renders the Kubernetes manifests (skipped: kubectl not found)', () => undefined);
  }
} else {
  // The fields each kind declares (kubernetes-models' types): the validators let unknown ones through.
  const knownFields = new KnownFields();
  // The custom kinds' CRDs (KEDA, CloudNativePG, its Barman Cloud plugin), as vendored.
  const crds = new CrdSchemas();

  describe.each(Object.keys(OVERLAYS))('overlay %s', (overlay) => {
    const objects = render(overlay);
    const workloads = [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'StatefulSet')];
    const pods = podLabelSets(objects);
    /** An app's environment, with its secret files written where its `*_FILE` settings say. */
    const appEnv = (all: K8sObject[], app: string) => {
      const deployment = named(all, 'Deployment', app);
      return containerEnv(appContainer(deployment), all, exampleSecrets, deployment);
    };

    it('renders only kinds it can check, each valid against its schema', () => {
      const problems = objects.flatMap((object) => {
        const kind = `${object.apiVersion}/${object.kind}`;
        const Model = MODELS[kind];
        if (!Model) {
          const crdProblems = crds.problems(object);
          if (crdProblems === undefined) return [`${kind} ${object.metadata.name}: no schema here`];
          return crdProblems.map((p) => `${kind} ${object.metadata.name}: ${p}`);
        }
        try {
          new Model(object as never).validate();
        } catch (err) {
          return [`${kind} ${object.metadata.name}: ${(err as Error).message}`];
        }
        return (knownFields.unknownFields(object) ?? []).map(
          (f) => `${kind} ${object.metadata.name}: unknown field ${f}`,
        );
      });
      expect(problems).toEqual([]);
      expect(objects.length).toBeGreaterThan(30);
    });

    it('keeps no secret value in git: every rendered Secret is empty, to be filled where it is deployed', () => {
      const filled = ofKind(objects, 'Secret').flatMap((s) =>
        Object.entries(dataOf(s))
          .filter(([key, value]) => value !== '' && !(s.type === 'kubernetes.io/basic-auth' && key === 'username'))
          .map(([key]) => `${s.metadata.name}/${key}`),
      );
      expect(filled).toEqual([]);
    });

    it('deploys every app it should, and no other', () => {
      const apps = ofKind(objects, 'Deployment')
        .filter((d) => podTemplateOf(d).metadata.labels['app.kubernetes.io/component'] !== 'pooler')
        .map((d) => d.metadata.name);
      expect(apps.sort()).toEqual([...OVERLAYS[overlay]].sort());
    });

    describe.each(OVERLAYS[overlay])('%s', (app) => {
      const container = appContainer(named(objects, 'Deployment', app));
      const env = appEnv(objects, app);
      const load = LOADERS[app];

      it('is given its secrets as files, none in its environment', () => {
        expect((container.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name)).toEqual([]);
        expect((container.envFrom ?? []).filter((e) => e.secretRef)).toEqual([]);
        const files = [
          ...mountedSecretFiles(named(objects, 'Deployment', app), container, objects, exampleSecrets).keys(),
        ];
        const fileSettings = (container.env ?? []).filter((e) => e.name.endsWith('_FILE'));
        // Every mounted secret file is named by the setting of its name, and nothing else is mounted there.
        expect(fileSettings.map((e) => e.value).sort()).toEqual([...files].sort());
        for (const { name, value } of fileSettings) expect(value).toBe(`${SECRETS_DIR}/${name.replace(/_FILE$/, '')}`);
        const mount = (container.volumeMounts ?? []).find((m) => m.mountPath === SECRETS_DIR);
        expect(mount?.readOnly).toBe(true);
      });

      if (app in SCHEMAS)
        it(`logs in to Postgres as its own role, ${SCHEMAS[app]}_svc, from a Secret of its own`, () => {
          const secretsOfDatabaseUrl = (podTemplateOf(named(objects, 'Deployment', app)).spec.volumes ?? []).flatMap(
            (v) =>
              (v.projected?.sources ?? []).flatMap((src) =>
                src.secret?.items?.some((i) => i.path === 'DATABASE_URL') ? [src.secret.name] : [],
              ),
          );
          expect(secretsOfDatabaseUrl).toEqual([expect.stringMatching(new RegExp(`^database-${app}(-|$)`))]);
        });

      it('sets only variables the app reads', () => {
        const read = new Set([...readsOf(load, env), ...readsOf(load, {}), ...telemetryVariables()]);
        expect(Object.keys(env).filter((name) => !read.has(name))).toEqual([]);
      });

      it('starts in production with what it is given (every secret production requires is set)', () => {
        expect(env.NODE_ENV).toBe('production');
        expect(() => load(env)).not.toThrow();
      });

      it('points at no loopback address (database, NATS, public and provider URLs are set)', () => {
        const config = JSON.stringify(load(env));
        expect(config.match(/[^"]*(127\.0\.0\.1|localhost)[^"]*/g) ?? []).toEqual([]);
      });

      it('probes /readyz and /healthz on the port the app listens on, which its container declares', () => {
        const { port, adminPort } = load(env);
        const declared = (container.ports ?? []).map((p) => p.containerPort);
        // The gateway declares its admin port too (ADMIN_PORT, set: a random one could not be declared).
        expect(declared).toEqual(adminPort === undefined ? [port] : [port, adminPort]);
        expect(probePorts(container)).toEqual({
          readinessProbe: { path: READYZ_PATH, port },
          livenessProbe: { path: HEALTHZ_PATH, port },
          startupProbe: { path: HEALTHZ_PATH, port },
        });
      });

      it('asks for CPU and memory, within limits', () => {
        expect(container.resources?.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
        expect(container.resources?.limits).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      });

      it('has a Service, a PodDisruptionBudget and an autoscaler: on queue lag for a worker, else on CPU', () => {
        const labels = podTemplateOf(named(objects, 'Deployment', app)).metadata.labels;
        const service = specOf<{ selector: Record<string, string> }>(named(objects, 'Service', app));
        expect(matches({ matchLabels: service.selector }, labels)).toBe(true);
        const pdb = specOf<{ selector: LabelSelector }>(named(objects, 'PodDisruptionBudget', app));
        expect(matches(pdb.selector, labels)).toBe(true);
        const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: app };
        const hpas = ofKind(objects, 'HorizontalPodAutoscaler').filter(
          (h) => specOf<HpaSpec>(h).scaleTargetRef.name === app,
        );
        const scaledObjects = ofKind(objects, 'ScaledObject').filter(
          (o) => specOf<ScaledObjectSpec>(o).scaleTargetRef.name === app,
        );
        if (QUEUE_WORKERS.includes(app)) {
          expect(hpas).toEqual([]);
          expect(scaledObjects.map((o) => specOf<ScaledObjectSpec>(o).scaleTargetRef)).toEqual([target]);
          expect(specOf<ScaledObjectSpec>(scaledObjects[0]).triggers.map((t) => t.type)).not.toContain('cpu');
        } else {
          expect(scaledObjects).toEqual([]);
          expect(hpas.map((h) => specOf<HpaSpec>(h).scaleTargetRef)).toEqual([target]);
          expect(specOf<HpaSpec>(hpas[0]).metrics.map((m) => m.resource?.name)).toEqual(['cpu']);
        }
      });
    });

    it('selects pods that exist: workloads, Services, PDBs, NetworkPolicies and their peers', () => {
      const unmatched: string[] = [];
      const check = (what: string, selector: LabelSelector) => {
        if (!pods.some((labels) => matches(selector, labels))) unmatched.push(what);
      };
      for (const w of workloads) {
        const spec = specOf<{ selector: LabelSelector; template: PodTemplate }>(w);
        if (!matches(spec.selector, spec.template.metadata.labels)) unmatched.push(`${w.kind} ${w.metadata.name}`);
      }
      for (const s of ofKind(objects, 'Service'))
        check(`Service ${s.metadata.name}`, { matchLabels: specOf<{ selector: Record<string, string> }>(s).selector });
      for (const p of ofKind(objects, 'PodDisruptionBudget'))
        check(`PDB ${p.metadata.name}`, specOf<{ selector: LabelSelector }>(p).selector);
      for (const n of ofKind(objects, 'NetworkPolicy')) {
        const spec = specOf<NetworkPolicySpec>(n);
        check(`NetworkPolicy ${n.metadata.name}`, spec.podSelector);
        const peers = [
          ...(spec.ingress ?? []).flatMap((r) => r.from ?? []),
          ...(spec.egress ?? []).flatMap((r) => r.to ?? []),
        ];
        // A peer with a namespaceSelector selects pods elsewhere (the Ingress controller, DNS, the operator).
        for (const peer of peers)
          if (peer.podSelector && !peer.namespaceSelector)
            check(`NetworkPolicy ${n.metadata.name} peer ${JSON.stringify(peer.podSelector)}`, peer.podSelector);
      }
      expect(unmatched).toEqual([]);
    });

    it('scales only rendered Deployments, and routes Services and the Ingress to declared ports', () => {
      const problems: string[] = [];
      for (const h of [...ofKind(objects, 'HorizontalPodAutoscaler'), ...ofKind(objects, 'ScaledObject')]) {
        const target = specOf<HpaSpec>(h).scaleTargetRef;
        if (!objects.some((o) => o.kind === target.kind && o.metadata.name === target.name))
          problems.push(`HPA ${h.metadata.name} scales ${target.kind} ${target.name}, not rendered`);
      }
      for (const s of ofKind(objects, 'Service')) {
        const spec = specOf<ServiceSpec>(s);
        const targets = workloads
          .map(podTemplateOf)
          .filter((t) => matches({ matchLabels: spec.selector }, t.metadata.labels))
          .flatMap((t) => t.spec.containers.flatMap((c) => c.ports ?? []));
        for (const port of spec.ports)
          if (!targets.some((p) => p.name === port.targetPort || p.containerPort === port.targetPort))
            problems.push(`Service ${s.metadata.name} port ${port.name} targets ${port.targetPort}, not declared`);
      }
      for (const ingress of ofKind(objects, 'Ingress'))
        for (const rule of specOf<IngressSpec>(ingress).rules)
          for (const { path, backend } of rule.http.paths) {
            const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === backend.service.name);
            const ports = service ? specOf<ServiceSpec>(service).ports.map((p) => p.name) : [];
            if (!ports.includes(backend.service.port.name))
              problems.push(
                `Ingress ${path} goes to ${backend.service.name}:${backend.service.port.name}, not a Service port`,
              );
          }
      expect(problems).toEqual([]);
    });

    it('exposes only the gateway, the provider webhooks and the console through the Ingress', () => {
      const routes = ofKind(objects, 'Ingress').flatMap((i) =>
        specOf<IngressSpec>(i).rules.flatMap((r) => r.http.paths.map((p) => `${p.path} -> ${p.backend.service.name}`)),
      );
      expect(routes.sort()).toEqual([
        '/ -> console',
        '/api -> gateway',
        '/docs -> gateway',
        '/provider/webhooks -> receivables-svc',
      ]);
      // Default deny, in and out, for every pod of the namespace.
      const deny = specOf<NetworkPolicySpec>(named(objects, 'NetworkPolicy', 'default-deny'));
      expect(deny).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
      // Only the gateway, receivables-svc and the console admit traffic from another namespace (the Ingress
      // controller); the gateway on its public port only (the admin port: the next test).
      const fromOutside = ofKind(objects, 'NetworkPolicy')
        .filter((n) =>
          (specOf<NetworkPolicySpec>(n).ingress ?? []).some((r) => r.from?.some((p) => p.namespaceSelector)),
        )
        .flatMap((n) => appsSelectedBy(specOf<NetworkPolicySpec>(n).podSelector, objects));
      const cnpgOperatorOnly = overlay === 'production-cnpg' ? ['payments-pg'] : [];
      expect([...new Set(fromOutside)].sort()).toEqual(
        [...cnpgOperatorOnly, 'console', 'gateway', 'nats', 'receivables-svc'].sort(),
      );
      // NATS: only KEDA's operator, only on the monitoring port (it reads the consumers' lag).
      const natsFromOutside = (specOf<NetworkPolicySpec>(named(objects, 'NetworkPolicy', 'nats')).ingress ?? []).filter(
        (r) => r.from?.some((p) => p.namespaceSelector),
      );
      expect(natsFromOutside).toEqual([
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'keda' } } }],
          ports: [{ protocol: 'TCP', port: 8222 }],
        },
      ]);
    });

    it("keeps the gateway's admin port private: the console's pods alone reach it, no Ingress routes to it", () => {
      expect(adminPortExposure(objects)).toEqual({ consoleAdmitted: true, others: [] });
    });

    it("lets the console reach the gateway's public and admin ports, and nothing else but DNS", () => {
      const gatewayPorts = (appContainer(named(objects, 'Deployment', 'gateway')).ports ?? []).map(
        (p) => `gateway:${p.containerPort}`,
      );
      expect(gatewayPorts).toHaveLength(2);
      expect(egressOf('console', objects).sort()).toEqual(gatewayPorts.sort());
    });

    it("points the console at the gateway's Services, on the ports the gateway's loader listens on", () => {
      const envOf = (app: string) => appEnv(objects, app);
      const gateway = loadGatewayConfig(envOf('gateway'));
      const consoleEnv = envOf('console');
      const gatewayPods = podTemplateOf(named(objects, 'Deployment', 'gateway'));
      const reached = [consoleEnv.GATEWAY_URL!, consoleEnv.GATEWAY_ADMIN_URL!].map((url) => {
        const { hostname, port } = new URL(url);
        const service = specOf<ServiceSpec>(named(objects, 'Service', hostname));
        const servicePort = service.ports.find((p) => p.port === Number(port));
        const target = gatewayPods.spec.containers[0].ports?.find(
          (p) => p.name === servicePort?.targetPort || p.containerPort === servicePort?.targetPort,
        );
        return {
          url,
          selectsGateway: matches({ matchLabels: service.selector }, gatewayPods.metadata.labels),
          containerPort: target?.containerPort,
        };
      });
      expect(reached).toEqual([
        { url: consoleEnv.GATEWAY_URL, selectsGateway: true, containerPort: gateway.port },
        { url: consoleEnv.GATEWAY_ADMIN_URL, selectsGateway: true, containerPort: gateway.adminPort },
      ]);
      // The admin API has a Service of its own, apart from the one the Ingress sends ERPs to.
      expect(new URL(consoleEnv.GATEWAY_ADMIN_URL!).hostname).not.toBe(new URL(consoleEnv.GATEWAY_URL!).hostname);
    });

    it('serves the console over TLS only, on a host of its own, with Secure cookies', () => {
      const ingresses = ofKind(objects, 'Ingress').map((i) => specOf<IngressSpec>(i));
      const consoleIngresses = ingresses.filter((i) =>
        i.rules.some((r) => r.http.paths.some((p) => p.backend.service.name === 'console')),
      );
      expect(consoleIngresses).toHaveLength(1);
      const [ingress] = consoleIngresses;
      const hosts = ingress.rules.map((r) => r.host);
      expect(hosts).toHaveLength(1);
      expect(ingress.tls?.flatMap((t) => t.hosts)).toEqual(hosts);
      expect(ingress.tls?.every((t) => typeof t.secretName === 'string' && t.secretName !== '')).toBe(true);
      // Nothing else on its host: its cookies and its same-origin check are the console's alone.
      const sharing = ingresses
        .flatMap((i) => i.rules)
        .filter((r) => r.host === hosts[0])
        .flatMap((r) => r.http.paths.map((p) => p.backend.service.name));
      expect([...new Set(sharing)]).toEqual(['console']);
      const env = appEnv(objects, 'console');
      expect(loadConsoleConfig(env).secureCookies).toBe(true);
    });

    it('hands out public URLs whose hosts the Ingress routes to the right app', () => {
      const hostOf = (service: string, path: string) =>
        ofKind(objects, 'Ingress').flatMap((i) =>
          specOf<IngressSpec>(i)
            .rules.filter((r) => r.http.paths.some((p) => p.path === path && p.backend.service.name === service))
            .map((r) => r.host),
        );
      const receivables = appEnv(objects, 'receivables-svc');
      expect([new URL(receivables.RECEIVABLES_PUBLIC_URL!).host]).toEqual(
        hostOf('receivables-svc', '/provider/webhooks'),
      );
      for (const app of ['gateway', 'receivables-svc', 'booklet-svc']) {
        const env = appEnv(objects, app);
        expect({ app, host: new URL(env.PUBLIC_BASE_URL!).host }).toEqual({ app, host: hostOf('gateway', '/api')[0] });
      }
    });

    it("provisions the bus with a Job of the gateway image, as the admin NATS user, with the apps' bus settings", () => {
      const job = named(objects, 'Job', 'bus-provision');
      const { containers } = podTemplateOf(job).spec;
      expect(containers).toHaveLength(1);
      const [container] = containers;
      expect(container.image).toBe(appContainer(named(objects, 'Deployment', 'gateway')).image);
      expect(container.command).toEqual(['node', 'dist/apps/gateway/transport/cli/cli.js', 'bus', 'provision']);
      const env = containerEnv(container, objects, exampleSecrets, job);
      expect(env.NATS_USER).toBe('admin');
      // Its password as a file: the nats-users Secret's NATS_ADMIN_PASSWORD.
      const sources = (podTemplateOf(job).spec.volumes ?? []).flatMap((v) => v.projected?.sources ?? []);
      expect(sources.map((src) => src.secret)).toEqual([
        { name: expect.stringMatching(/^nats-users/), items: [{ key: 'NATS_ADMIN_PASSWORD', path: 'NATS_PASSWORD' }] },
      ]);
      expect(container.env?.find((e) => e.name === 'NATS_PASSWORD_FILE')?.value).toBe(`${SECRETS_DIR}/NATS_PASSWORD`);
      expect(env.NATS_PASSWORD).toBeUndefined();
      expect(loadCommonConfig(env).natsPassword).toBe(exampleValues.get('NATS_ADMIN_PASSWORD'));
      // The settings the services check their streams against: the same NATS, prefix, replicas and limit.
      const config = loadCommonConfig(env);
      for (const app of ['receivables-svc', 'booklet-svc', 'callback-svc']) {
        const service = LOADERS[app](appEnv(objects, app)) as unknown as typeof config;
        expect({
          app,
          url: config.natsUrl,
          prefix: config.busPrefix,
          replicas: config.streamReplicas,
          maxBytes: config.streamMaxBytes,
        }).toEqual({
          app,
          url: service.natsUrl,
          prefix: service.busPrefix,
          replicas: service.streamReplicas,
          maxBytes: service.streamMaxBytes,
        });
        // A service logs in as itself, never as the provisioning user.
        expect(service.natsUser).toBe(app);
      }
      expect(container.resources?.limits).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    });

    it('gives each NATS server room for every stream and claim store at STREAM_MAX_BYTES, below its volume', () => {
      // JetStream reserves a stream's max_bytes when it is created, and with R3 every server holds a
      // replica of every stream: the provisioner is refused ("insufficient storage") past max_file_store.
      const nats = named(objects, 'StatefulSet', 'nats');
      const storeGiB = Number(/max_file_store:\s*(\d+)GiB/.exec(natsConfig(nats, objects))?.[1]);
      const volumeGiB = Number(
        /^(\d+)Gi$/.exec(
          specOf<{ volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] }>(nats)
            .volumeClaimTemplates[0].spec.resources.requests.storage,
        )?.[1],
      );
      const provision = named(objects, 'Job', 'bus-provision');
      const job = podTemplateOf(provision).spec.containers[0];
      const { streamMaxBytes } = loadCommonConfig(containerEnv(job, objects, exampleSecrets, provision));
      const streams = JobStreams.length + 1 + claimStoreRecipients().length;
      expect(storeGiB * 1024 ** 3).toBeGreaterThanOrEqual(streams * streamMaxBytes);
      expect(volumeGiB).toBeGreaterThan(storeGiB);
    });

    it('gives the apps the three NATS pods and R3 streams; nats-server accepts the config the pods render', () => {
      const nats = named(objects, 'StatefulSet', 'nats');
      const { replicas, serviceName } = specOf<{ replicas: number; serviceName: string }>(nats);
      const bus = dataOf(objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('payments-bus'))!);
      const pods = Array.from({ length: replicas }, (_, i) => `nats-${i}.${serviceName}`);
      expect(replicas).toBe(3);
      expect(bus.NATS_URL.split(',')).toEqual(pods.map((p) => `nats://${p}:4222`));
      expect(bus.STREAM_REPLICAS).toBe(String(replicas));
      const natsConf = natsConfig(nats, objects);
      expect([...natsConf.matchAll(/nats-route:\/\/([^:]+):6222/g)].map((m) => m[1])).toEqual(pods);
      checkNatsConfig(nats, objects);
      // The server's environment is exactly the variables its config refers to ($NAME).
      const template = dataOf(named(objects, 'ConfigMap', configMapVolume(nats, 'bus-users')))[
        'nats-server.conf.template'
      ];
      const uncommented = (text: string) => text.replace(/#.*$/gm, '');
      const referenced = [...`${uncommented(natsConf)}\n${uncommented(template)}`.matchAll(/\$([A-Z][A-Z0-9_]*)\b/g)]
        .map((m) => m[1])
        .filter((name) => name !== 'JS' && name !== 'O');
      const server = podTemplateOf(nats).spec.containers[0];
      // The passwords are written into the config by the init container; the server's environment is
      // the other variables its config refers to, and GOMEMLIMIT (the Go runtime's).
      const passwords = [...new Set(referenced.filter((name) => name.endsWith('_PASSWORD')))];
      expect(passwords.sort()).toEqual(
        Object.keys(dataOf(named(objects, 'Secret', secretVolume(nats, 'users')))).sort(),
      );
      expect(Object.keys(containerEnv(server, objects, exampleSecrets)).sort()).toEqual(
        [...new Set([...referenced.filter((name) => !passwords.includes(name)), 'GOMEMLIMIT'])].sort(),
      );
    });

    it('runs NATS as the official chart does: its probes, GOMEMLIMIT, zone spread, a system account, metrics', () => {
      const nats = named(objects, 'StatefulSet', 'nats');
      const template = podTemplateOf(nats);
      const [server, exporter] = template.spec.containers;
      // nats-io/k8s helm/charts/nats 2.14.2, files/stateful-set/nats-container.yaml.
      const chartProbe = (path: string, periodSeconds: number, failureThreshold: number) => ({
        httpGet: { path, port: 'monitor' },
        initialDelaySeconds: 10,
        timeoutSeconds: 5,
        periodSeconds,
        successThreshold: 1,
        failureThreshold,
      });
      expect({
        startupProbe: server.startupProbe,
        livenessProbe: server.livenessProbe,
        readinessProbe: server.readinessProbe,
      }).toEqual({
        startupProbe: chartProbe('/healthz', 10, 90),
        livenessProbe: chartProbe('/healthz?js-enabled-only=true', 30, 3),
        readinessProbe: chartProbe('/healthz?js-server-only=true', 10, 3),
      });
      // A soft limit for the Go runtime under the container's limit (80 to 95% of it).
      const limit = bytes(server.resources?.limits?.memory ?? '0');
      const goMemLimit = bytes(containerEnv(server, objects, exampleSecrets).GOMEMLIMIT ?? '0');
      expect(goMemLimit / limit).toBeGreaterThanOrEqual(0.8);
      expect(goMemLimit / limit).toBeLessThanOrEqual(0.95);
      // One server per zone and per node, refused rather than doubled up.
      const spread = specOf<{ template: { spec: { topologySpreadConstraints: SpreadConstraint[] } } }>(nats).template
        .spec.topologySpreadConstraints;
      for (const key of ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']) {
        const constraint = spread.find((c) => c.topologyKey === key);
        expect({ key, maxSkew: constraint?.maxSkew, when: constraint?.whenUnsatisfiable }).toEqual({
          key,
          maxSkew: 1,
          when: 'DoNotSchedule',
        });
        expect(constraint && matches(constraint.labelSelector, template.metadata.labels)).toBe(true);
      }
      expect(natsConfig(nats, objects)).toMatch(/^system_account: SYS$/m);
      // The exporter sidecar reads this server's monitoring port and serves the port Prometheus is told.
      expect(exporter.name).toBe('prom-exporter');
      expect(exporter.args?.at(-1)).toBe(`http://localhost:${portNamed(server, 'monitor')}/`);
      const annotations = (template.metadata as { annotations?: Record<string, string> }).annotations ?? {};
      expect(annotations['prometheus.io/scrape']).toBe('true');
      expect(Number(annotations['prometheus.io/port'])).toBe(portNamed(exporter, 'prom-metrics'));
    });

    it('pins every image to an exact version (a digest, or a tag naming a release)', () => {
      const floating = imagesOf(objects).filter(({ image }) => !exactImage(image));
      expect(floating).toEqual([]);
      expect(imagesOf(objects).length).toBeGreaterThan(8);
    });

    if (OVERLAYS[overlay].includes('bank-sandbox')) {
      it('points receivables-svc and the bank sandbox at each other through Services (any instance answers)', () => {
        const envOf = (app: string) => appEnv(objects, app);
        const urls = [
          { url: envOf('bank-sandbox').BANK_SANDBOX_WEBHOOK_URL, app: 'receivables-svc' },
          { url: envOf('receivables-svc').PROVIDER_BASE_URL, app: 'bank-sandbox' },
        ];
        for (const { url, app } of urls) {
          const { hostname, port } = new URL(url!);
          const service = specOf<ServiceSpec>(named(objects, 'Service', hostname));
          const labels = podTemplateOf(named(objects, 'Deployment', app)).metadata.labels;
          expect({ url, selects: app, ok: matches({ matchLabels: service.selector }, labels) }).toEqual({
            url,
            selects: app,
            ok: true,
          });
          expect(service.ports.map((p) => p.port)).toContain(Number(port));
        }
      });
    }

    it('migrates with a Job of the gateway image (npm run migrate), directly to Postgres, before the apps', () => {
      const job = named(objects, 'Job', 'migrate');
      const [container, ...others] = podTemplateOf(job).spec.containers;
      expect(others).toEqual([]);
      expect(container.image).toBe(appContainer(named(objects, 'Deployment', 'gateway')).image);
      expect(container.command).toEqual(['npm', 'run', 'migrate']);
      expect(specOf<{ template: { spec: { restartPolicy: string } } }>(job).template.spec.restartPolicy).toBe(
        'OnFailure',
      );
      const env = containerEnv(container, objects, exampleSecrets, job);
      // Its own Secret, never an app's: MIGRATION_DATABASE_URL as a file, and no DATABASE_URL.
      const sources = (podTemplateOf(job).spec.volumes ?? []).flatMap((v) => v.projected?.sources ?? []);
      expect(sources.map((src) => src.secret?.name)).toEqual([expect.stringMatching(/^migrate-database/)]);
      expect(Object.keys(env).filter((k) => k.includes('DATABASE_URL'))).toEqual(['MIGRATION_DATABASE_URL_FILE']);
      expect(env.NODE_ENV).toBe('production');
      expect(egressOfPod(podTemplateOf(job).metadata.labels, objects)).toEqual(['anywhere:5432']);
    });

    it("scales the queue workers on their consumers' lag (KEDA's NATS JetStream scaler), as the bus names them", () => {
      const nats = named(objects, 'StatefulSet', 'nats');
      const { serviceName } = specOf<{ serviceName: string }>(nats);
      const namespace = nats.metadata.namespace;
      const monitor = portNamed(podTemplateOf(nats).spec.containers[0], 'monitor');
      // KEDA asks the consumer's leader at <server_name>.<endpoint>: server names are the pods' names.
      expect(natsConfig(nats, objects)).toMatch(/^server_name: \$POD_NAME$/m);
      const { busPrefix, streamReplicas, streamMaxBytes } = loadCommonConfig(appEnv(objects, 'receivables-svc'));
      for (const app of QUEUE_WORKERS) {
        const scaled = specOf<ScaledObjectSpec>(named(objects, 'ScaledObject', app));
        const { consumers } = topologyOf(app as never, busPrefix, {
          replicas: streamReplicas,
          maxBytes: streamMaxBytes,
        });
        expect(consumers.length).toBeGreaterThan(0);
        expect(
          scaled.triggers.map(({ type, metadata }) => ({
            type,
            endpoint: metadata.natsServerMonitoringEndpoint,
            account: metadata.account,
            stream: metadata.stream,
            consumer: metadata.consumer,
          })),
        ).toEqual(
          consumers.map(({ stream, consumer }) => ({
            type: 'nats-jetstream',
            endpoint: `${serviceName}.${namespace}.svc.cluster.local:${monitor}`,
            account: '$G',
            stream,
            consumer: consumer.durable_name,
          })),
        );
        for (const { metadata } of scaled.triggers) expect(metadata.lagThreshold).toMatch(/^[1-9]\d*$/);
        expect(scaled.minReplicaCount).toBeGreaterThanOrEqual(2);
        expect(scaled.maxReplicaCount).toBeGreaterThan(scaled.minReplicaCount);
      }
    });

    it("lets the gateway's CPU autoscaler reach what docs/capacity.md needs at peak, and one more", () => {
      const gateway = named(objects, 'Deployment', 'gateway');
      const hpa = specOf<HpaSpec>(named(objects, 'HorizontalPodAutoscaler', 'gateway'));
      const target = hpa.metrics[0].resource?.target?.averageUtilization ?? 100;
      const request = cores(appContainer(gateway).resources?.requests?.cpu ?? '0');
      const peak = gatewayPeakCores();
      const needed = Math.ceil(peak / (request * (target / 100)));
      expect({ peak, needed, max: hpa.maxReplicas }).toEqual({
        peak,
        needed,
        max: expect.any(Number) as number,
      });
      expect(hpa.maxReplicas).toBeGreaterThanOrEqual(needed + 1);
    });

    const pooler = poolerOf(objects, overlay);
    it(`puts PgBouncer in transaction mode between the apps and Postgres (${pooler.kind}), within its budget`, () => {
      expect(pooler.poolMode).toBe('transaction');
      // Drivers' startup options are dropped, not refused: no app chooses its schema that way.
      expect(pooler.ignoreStartupParameters.split(',').map((p) => p.trim())).toEqual(
        expect.arrayContaining(['options', 'extra_float_digits']),
      );
      // Every app instance at its autoscaler's maximum plus a rollout's surge, with its pool full and
      // its start-up connection, may land on one PgBouncer instance (a Service balances connections,
      // not load).
      const clients = ofKind(objects, 'Deployment')
        .filter((d) => 'DATABASE_URL_FILE' in appEnv(objects, d.metadata.name))
        .map((d) => {
          const surge = specOf<{ strategy: { rollingUpdate: { maxSurge: number } } }>(d).strategy.rollingUpdate
            .maxSurge;
          const pool = Number(appEnv(objects, d.metadata.name).DATABASE_POOL_SIZE);
          if (!Number.isInteger(pool)) throw new Error(`${d.metadata.name} has a database but no DATABASE_POOL_SIZE`);
          return (maxReplicasOf(d.metadata.name, objects) + surge) * (pool + 1);
        })
        .reduce((a, b) => a + b, 0);
      expect(clients).toBeLessThanOrEqual(pooler.maxClientConn);
      // Each role's pool is small; all of them together are capped per PgBouncer instance.
      expect(pooler.maxDbConnections).toBeGreaterThanOrEqual(pooler.defaultPoolSize);
      if (overlay === 'production-cnpg') {
        const clusterSpec = specOf<ClusterSpec>(ofKind(objects, 'Cluster')[0]);
        const superuserReserved = 3;
        // The migrate Job: a few direct connections besides the poolers'.
        const migrateReserved = 10;
        expect(pooler.instances * pooler.maxDbConnections).toBeLessThanOrEqual(
          Number(clusterSpec.postgresql.parameters.max_connections) - superuserReserved - migrateReserved,
        );
      }
    });

    if (overlay !== 'production-cnpg') {
      it('runs its own PgBouncer (Deployment and Service) with the apps as its only clients', () => {
        const deployment = named(objects, 'Deployment', 'pgbouncer');
        const service = specOf<ServiceSpec>(named(objects, 'Service', 'pgbouncer'));
        const labels = podTemplateOf(deployment).metadata.labels;
        expect(matches({ matchLabels: service.selector }, labels)).toBe(true);
        expect(service.ports.map((p) => p.port)).toEqual([5432]);
        expect(specOf<{ replicas: number }>(deployment).replicas).toBeGreaterThanOrEqual(2);
        const clients = [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'Job')]
          .filter((w) => admitsOn(objects, labels, podTemplateOf(w).metadata.labels, 5432))
          .map((w) => w.metadata.name)
          .sort();
        expect(clients).toEqual(OVERLAYS[overlay].filter((a) => a in SCHEMAS).sort());
      });
    }

    if (overlay === 'production-cnpg') {
      it('runs CloudNativePG with a synchronous standby, backups, a role per service and only the pooler in front', () => {
        const cluster = ofKind(objects, 'Cluster')[0];
        const clusterSpec = specOf<ClusterSpec>(cluster);
        expect(clusterSpec.instances).toBeGreaterThanOrEqual(3);
        expect(clusterSpec.postgresql.synchronous).toMatchObject({ number: 1, dataDurability: 'required' });
        expect(['any', 'first']).toContain(clusterSpec.postgresql.synchronous.method);
        // Backups: WAL archived continuously to an ObjectStore that is rendered, and a ScheduledBackup.
        const archiver = clusterSpec.plugins.find((p) => p.isWALArchiver);
        expect(archiver?.name).toBe('barman-cloud.cloudnative-pg.io');
        named(objects, 'ObjectStore', archiver?.parameters.barmanObjectName ?? '');
        const scheduled = ofKind(objects, 'ScheduledBackup').map((b) => specOf<ScheduledBackupSpec>(b));
        expect(scheduled).toEqual([
          expect.objectContaining({
            cluster: { name: cluster.metadata.name },
            method: 'plugin',
            pluginConfiguration: { name: archiver?.name },
          }),
        ]);
        // A login role per service, its password in a basic-auth Secret of that user name.
        const roles = clusterSpec.managed.roles;
        expect(roles.map((r) => r.name).sort()).toEqual(
          OVERLAYS[overlay]
            .filter((a) => a in SCHEMAS)
            .map((a) => `${SCHEMAS[a]}_svc`)
            .sort(),
        );
        for (const role of roles) {
          expect({ role: role.name, login: role.login, ensure: role.ensure }).toEqual({
            role: role.name,
            login: true,
            ensure: 'present',
          });
          const secret = named(objects, 'Secret', role.passwordSecret.name);
          expect({ role: role.name, type: secret.type, username: dataOf(secret).username }).toEqual({
            role: role.name,
            type: 'kubernetes.io/basic-auth',
            username: role.name,
          });
        }
        for (const name of [clusterSpec.bootstrap.initdb.secret.name, clusterSpec.superuserSecret.name]) {
          const user = named(objects, 'Secret', name);
          expect(user.type).toBe('kubernetes.io/basic-auth');
          expect(Object.keys(dataOf(user)).sort()).toEqual(['password', 'username']);
        }
        // Pooler of this cluster's primary; the instances admit the pooler, each other and the migrate
        // Job, no app: the apps go through the pooler only.
        const poolerSpec = specOf<PoolerSpec>(ofKind(objects, 'Pooler')[0]);
        expect(poolerSpec).toMatchObject({ cluster: { name: cluster.metadata.name }, type: 'rw' });
        const instances = { 'cnpg.io/cluster': cluster.metadata.name };
        const direct = [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'Job')]
          .filter((w) => admitsOn(objects, instances, podTemplateOf(w).metadata.labels, 5432))
          .map((w) => w.metadata.name);
        expect(direct).toEqual(['migrate']);
        expect(
          admitsOn(objects, instances, { 'cnpg.io/poolerName': ofKind(objects, 'Pooler')[0].metadata.name }, 5432),
        ).toBe(true);
      });
    }
  });

  it('validates for real: a wrong field type, a missing field or an unknown one is refused', () => {
    const deployment = render('production').find((o) => o.kind === 'Deployment')!;
    const broken = structuredClone(deployment) as K8sObject & { spec: { template: PodTemplate } };
    (broken.spec.template.spec.containers[0].ports![0] as { containerPort: unknown }).containerPort = 'http';
    expect(() => new Deployment(broken as never).validate()).toThrow(/containerPort must be integer/);
    const nameless = structuredClone(deployment) as K8sObject & { spec: { template: PodTemplate } };
    delete (nameless.spec.template.spec.containers[0] as Partial<Container>).name;
    expect(() => new Deployment(nameless as never).validate()).toThrow(/must have required property name/);
    const misspelt = structuredClone(deployment) as K8sObject & { spec: { template: PodTemplate } };
    Object.assign(misspelt.spec.template.spec.containers[0], { readinesProbe: {} });
    expect(() => new Deployment(misspelt as never).validate()).not.toThrow();
    expect(knownFields.unknownFields(misspelt)).toEqual(['.spec.template.spec.containers[0].readinesProbe']);
  });

  it('validates the custom kinds for real against their CRDs: a misspelt field, a wrong type, a bad enum', () => {
    const objects = render('production-cnpg');
    const cluster = named(objects, 'Cluster', 'payments-pg');
    expect(crds.problems(cluster)).toEqual([]);
    const misspelt = structuredClone(cluster) as K8sObject & { spec: Record<string, unknown> };
    misspelt.spec.instance = misspelt.spec.instances;
    delete misspelt.spec.instances;
    expect(crds.problems(misspelt)).toEqual([
      "/spec must have required property 'instances'",
      '/spec must NOT have additional properties (instance)',
    ]);
    const pooler = structuredClone(named(objects, 'Pooler', 'payments-pg-pooler')) as K8sObject & {
      spec: { pgbouncer: { poolMode: string } };
    };
    pooler.spec.pgbouncer.poolMode = 'statement';
    expect(crds.problems(pooler)).toEqual(['/spec/pgbouncer/poolMode must be equal to one of the allowed values']);
    const scaled = structuredClone(named(objects, 'ScaledObject', 'callback-svc')) as K8sObject & {
      spec: { maxReplicaCount: unknown; triggers: Record<string, unknown>[] };
    };
    scaled.spec.maxReplicaCount = 'eight';
    scaled.spec.triggers[0].metdata = scaled.spec.triggers[0].metadata;
    expect(crds.problems(scaled)).toEqual(
      expect.arrayContaining([
        '/spec/maxReplicaCount must be integer',
        '/spec/triggers/0 must NOT have additional properties (metdata)',
      ]),
    );
    expect(crds.kinds().sort()).toEqual([
      'barmancloud.cnpg.io/v1/ObjectStore',
      'keda.sh/v1alpha1/ScaledObject',
      'postgresql.cnpg.io/v1/Cluster',
      'postgresql.cnpg.io/v1/Pooler',
      'postgresql.cnpg.io/v1/ScheduledBackup',
    ]);
  });

  it('sees every other way to the admin port: a namespace, any pod, any port, an address, an Ingress', () => {
    const objects = render('production');
    const toGateway = (name: string, ingress: unknown[]): K8sObject => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name },
      spec: {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } },
        policyTypes: ['Ingress'],
        ingress,
      },
    });
    const ingressNginx = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
    const consolePods = { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'console' } } };
    const rogues = [
      toGateway('from-ingress-controller', [{ from: [ingressNginx], ports: [{ protocol: 'TCP', port: 'admin' }] }]),
      toGateway('from-every-pod', [{ from: [{ podSelector: {} }], ports: [{ port: 3600 }] }]),
      toGateway('every-port', [
        { from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'callback-svc' } } }] },
      ]),
      toGateway('port-range', [
        { from: [{ ipBlock: { cidr: '10.0.0.0/8' } }], ports: [{ port: 3000, endPort: 4000 }] },
      ]),
      toGateway('every-source', [{ ports: [{ port: 'admin' }] }]),
      toGateway('console-anywhere', [
        { from: [{ ...consolePods, namespaceSelector: {} }], ports: [{ port: 'admin' }] },
      ]),
    ];
    for (const rogue of rogues)
      expect(adminPortExposure([...objects, rogue])).toEqual({
        consoleAdmitted: true,
        others: [expect.stringContaining(`NetworkPolicy ${rogue.metadata.name}:`)],
      });
    // Another port from outside, or the admin port over UDP, is not the admin API.
    const harmless = [
      toGateway('public-port', [{ from: [ingressNginx], ports: [{ port: 'http' }] }]),
      toGateway('udp', [{ from: [ingressNginx], ports: [{ protocol: 'UDP', port: 3600 }] }]),
    ];
    expect(adminPortExposure([...objects, ...harmless])).toEqual({ consoleAdmitted: true, others: [] });
    // An Ingress path to the admin Service, or the Service as a load balancer.
    const ingress = structuredClone(named(objects, 'Ingress', 'gateway'));
    specOf<IngressSpec>(ingress).rules[0].http.paths.push({
      path: '/admin',
      backend: { service: { name: 'gateway-admin', port: { name: 'admin' } } },
    });
    const balanced = structuredClone(named(objects, 'Service', 'gateway-admin'));
    Object.assign(specOf<ServiceSpec>(balanced), { type: 'LoadBalancer' });
    const rest = objects.filter((o) => o !== named(objects, 'Ingress', 'gateway'));
    expect(adminPortExposure([...rest, ingress]).others).toEqual([
      'Ingress gateway: /admin goes to the admin port (Service gateway-admin)',
    ]);
    const others = objects.filter((o) => o !== named(objects, 'Service', 'gateway-admin'));
    expect(adminPortExposure([...others, balanced]).others).toEqual([
      'Service gateway-admin: type LoadBalancer opens the admin port outside the cluster',
    ]);
    // Without the console's rule, the console is not admitted (its pages would fail).
    const withoutConsole = objects.filter(
      (o) => !(o.kind === 'NetworkPolicy' && o.metadata.name === 'gateway-from-console'),
    );
    expect(adminPortExposure(withoutConsole)).toEqual({ consoleAdmitted: false, others: [] });
    // The console's egress, opened to anywhere, is seen.
    const open = { ...structuredClone(named(objects, 'NetworkPolicy', 'console-to-gateway')), metadata: { name: 'x' } };
    Object.assign(specOf<NetworkPolicySpec>(open), { egress: [{ ports: [{ port: 443 }] }] });
    expect(egressOf('console', [...objects, open])).toContain('anywhere:443');
  });
}

interface SpreadConstraint {
  topologyKey: string;
  maxSkew: number;
  whenUnsatisfiable: string;
  labelSelector: LabelSelector;
}

/** A Kubernetes memory quantity (Ki, Mi, Gi or plain bytes) in bytes; GOMEMLIMIT's KiB, MiB, GiB too. */
function bytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi|KiB|MiB|GiB)?$/.exec(quantity);
  if (!match) throw new Error(`not a memory quantity: ${quantity}`);
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[(match[2] ?? '').replace(/B$/, '')] ?? 1;
  return Number(match[1]) * unit;
}

function portNamed(container: Container, name: string): number {
  const port = (container.ports ?? []).find((p) => p.name === name)?.containerPort;
  if (port === undefined) throw new Error(`${container.name} declares no port ${name}`);
  return port;
}

/** Every image the render runs: containers and init containers of every pod template, and CloudNativePG's. */
function imagesOf(objects: K8sObject[]): { object: string; image: string }[] {
  const fromTemplates = objects.flatMap((o) => {
    const template = (o.spec as { template?: PodTemplate } | undefined)?.template;
    if (!template?.spec) return [];
    return [...(template.spec.initContainers ?? []), ...template.spec.containers].map((c) => ({
      object: `${o.kind} ${o.metadata.name} ${c.name}`,
      image: c.image,
    }));
  });
  const clusters = ofKind(objects, 'Cluster').map((c) => ({
    object: `Cluster ${c.metadata.name}`,
    image: String((c.spec as { imageName?: string }).imageName ?? '(operator default)'),
  }));
  return [...fromTemplates, ...clusters];
}

/**
 * Whether an image reference names one build: a digest, or a tag that starts with a full release
 * number (1.2.3, or major.minor for PostgreSQL, whose releases have two parts), never `latest` or a
 * bare major like `16` or `2.10`.
 */
function exactImage(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const tag = /:([^/:]+)$/.exec(image)?.[1];
  if (tag === undefined) return false;
  if (/^\d+\.\d+\.\d+(-[\w.-]+)?$/.test(tag)) return true;
  return /\/postgresql:\d{2}\.\d+(-[\w.-]+)?$/.test(image);
}

interface HpaSpec {
  scaleTargetRef: { apiVersion: string; kind: string; name: string };
  maxReplicas: number;
  metrics: { resource?: { name: string; target?: { averageUtilization?: number } } }[];
}
interface ScaledObjectSpec {
  scaleTargetRef: { apiVersion: string; kind: string; name: string };
  minReplicaCount: number;
  maxReplicaCount: number;
  triggers: { type: string; metadata: Record<string, string> }[];
}
interface ScheduledBackupSpec {
  cluster: { name: string };
  method: string;
  pluginConfiguration?: { name: string };
}
interface ServiceSpec {
  type?: string;
  selector: Record<string, string>;
  ports: { name: string; port: number; targetPort: string | number }[];
}
interface IngressSpec {
  tls?: { hosts: string[]; secretName?: string }[];
  rules: {
    host: string;
    http: { paths: { path: string; backend: { service: { name: string; port: { name: string } } } }[] };
  }[];
}
interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string };
}
interface NetworkPolicyPort {
  protocol?: string;
  port?: number | string;
  endPort?: number;
}
interface NetworkPolicySpec {
  podSelector: LabelSelector;
  policyTypes?: string[];
  ingress?: { from?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
  egress?: { to?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
}
interface ClusterSpec {
  instances: number;
  postgresql: {
    parameters: Record<string, string>;
    synchronous: { method: string; number: number; dataDurability: string };
  };
  bootstrap: { initdb: { secret: { name: string } } };
  superuserSecret: { name: string };
  managed: { roles: { name: string; ensure: string; login: boolean; passwordSecret: { name: string } }[] };
  plugins: { name: string; isWALArchiver?: boolean; parameters: Record<string, string> }[];
}
interface PoolerSpec {
  cluster: { name: string };
  instances: number;
  type: string;
  pgbouncer: { poolMode: string; parameters: Record<string, string> };
}

/** The pooler in front of Postgres: CloudNativePG's Pooler, or the PgBouncer Deployment and its pgbouncer.ini. */
interface PoolerSettings {
  kind: string;
  instances: number;
  poolMode: string;
  ignoreStartupParameters: string;
  maxClientConn: number;
  defaultPoolSize: number;
  maxDbConnections: number;
}

function poolerOf(objects: K8sObject[], overlay: string): PoolerSettings {
  if (overlay === 'production-cnpg') {
    const spec = specOf<PoolerSpec>(ofKind(objects, 'Pooler')[0]);
    const p = spec.pgbouncer.parameters;
    return {
      kind: 'CloudNativePG Pooler',
      instances: spec.instances,
      poolMode: spec.pgbouncer.poolMode,
      ignoreStartupParameters: p.ignore_startup_parameters ?? '',
      maxClientConn: Number(p.max_client_conn),
      defaultPoolSize: Number(p.default_pool_size),
      maxDbConnections: Number(p.max_db_connections),
    };
  }
  const deployment = named(objects, 'Deployment', 'pgbouncer');
  const ini = dataOf(named(objects, 'ConfigMap', configMapVolume(deployment, 'config')))['pgbouncer.ini'];
  const setting = (name: string) => new RegExp(`^${name}\\s*=\\s*(.*)$`, 'm').exec(ini)?.[1].trim() ?? '';
  return {
    kind: 'PgBouncer Deployment',
    instances: specOf<{ replicas: number }>(deployment).replicas,
    poolMode: setting('pool_mode'),
    ignoreStartupParameters: setting('ignore_startup_parameters'),
    maxClientConn: Number(setting('max_client_conn')),
    defaultPoolSize: Number(setting('default_pool_size')),
    maxDbConnections: Number(setting('max_db_connections')),
  };
}

/** The most instances an app's autoscaler (HPA or KEDA ScaledObject) may run. */
function maxReplicasOf(app: string, objects: K8sObject[]): number {
  const scaled = ofKind(objects, 'ScaledObject').find((o) => specOf<ScaledObjectSpec>(o).scaleTargetRef.name === app);
  if (scaled) return specOf<ScaledObjectSpec>(scaled).maxReplicaCount;
  return specOf<HpaSpec>(named(objects, 'HorizontalPodAutoscaler', app)).maxReplicas;
}

/** Whether some NetworkPolicy on the pods labelled `to` admits, on a TCP port, pods labelled `from` of this namespace. */
function admitsOn(
  objects: K8sObject[],
  to: Record<string, string>,
  from: Record<string, string>,
  port: number,
): boolean {
  return rulesFor(objects, to, 'Ingress').some(
    ({ peers, ports }) =>
      coversPort(ports, { containerPort: port }) &&
      (peers ?? []).some((p) => p.podSelector && !p.namespaceSelector && !p.ipBlock && matches(p.podSelector, from)),
  );
}

/** A CPU quantity (500m, 1, '2') in cores. */
function cores(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) / 1000 : Number(quantity);
}

/**
 * The gateway's CPU at peak in docs/capacity.md ("10 million charges a day"): the larger of its two
 * figures (batches, one charge per POST), in cores.
 */
function gatewayPeakCores(): number {
  const text = readFileSync(join(repoRoot, 'docs', 'capacity.md'), 'utf8');
  const row = text.split('\n').find((line) => /^\|\s*gateway\s*\|/.test(line) && /cores/.test(line));
  const figures = [...(row ?? '').matchAll(/([\d.]+)\s*cores/g)].map((m) => Number(m[1]));
  if (figures.length === 0) throw new Error('docs/capacity.md has no gateway row with its CPU at peak in cores');
  return Math.max(...figures);
}

/** The app's one container. */
function appContainer(deployment: K8sObject): Container {
  const { containers } = podTemplateOf(deployment).spec;
  if (containers.length !== 1 || containers[0].name !== deployment.metadata.name)
    throw new Error(`Deployment ${deployment.metadata.name} must have one container of its name`);
  return containers[0];
}

/**
 * The label sets of every pod the render makes: its workloads' templates, and the pods CloudNativePG
 * makes for a Cluster and a Pooler (labelled cnpg.io/cluster and cnpg.io/poolerName, as it documents).
 */
function podLabelSets(objects: K8sObject[]): Record<string, string>[] {
  return [
    ...[...ofKind(objects, 'Deployment'), ...ofKind(objects, 'StatefulSet'), ...ofKind(objects, 'Job')].map(
      (w) => podTemplateOf(w).metadata.labels,
    ),
    ...ofKind(objects, 'Cluster').map((c) => ({ 'cnpg.io/cluster': c.metadata.name })),
    ...ofKind(objects, 'Pooler').map((p) => ({ 'cnpg.io/poolerName': p.metadata.name })),
  ];
}

/** Names of the Deployments, StatefulSets and CloudNativePG clusters whose pods a selector picks. */
function appsSelectedBy(selector: LabelSelector, objects: K8sObject[]): string[] {
  const workloads = [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'StatefulSet')]
    .filter((w) => matches(selector, podTemplateOf(w).metadata.labels))
    .map((w) => w.metadata.name);
  const clusters = ofKind(objects, 'Cluster')
    .filter((c) => matches(selector, { 'cnpg.io/cluster': c.metadata.name }))
    .map((c) => c.metadata.name);
  return [...workloads, ...clusters];
}

/** Whether a policy rule's ports take in a TCP container port (no ports: every port). */
function coversPort(ports: NetworkPolicyPort[] | undefined, port: { name?: string; containerPort: number }): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some(({ protocol = 'TCP', port: p, endPort }) => {
    if (protocol !== 'TCP') return false;
    if (p === undefined) return true;
    if (typeof p === 'string') return p === port.name;
    return endPort === undefined ? p === port.containerPort : p <= port.containerPort && port.containerPort <= endPort;
  });
}

/** The ingress (or egress) rules of every NetworkPolicy that applies to pods with these labels. */
function rulesFor(
  objects: K8sObject[],
  labels: Record<string, string>,
  direction: 'Ingress' | 'Egress',
): { policy: string; peers?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[] {
  return ofKind(objects, 'NetworkPolicy').flatMap((policy) => {
    const spec = specOf<NetworkPolicySpec>(policy);
    // Without policyTypes, Kubernetes takes Ingress, and Egress if there are egress rules.
    const types = spec.policyTypes ?? ['Ingress', ...(spec.egress ? ['Egress'] : [])];
    if (!matches(spec.podSelector, labels) || !types.includes(direction)) return [];
    const policyName = policy.metadata.name;
    return direction === 'Ingress'
      ? (spec.ingress ?? []).map(({ from, ports }) => ({ policy: policyName, peers: from, ports }))
      : (spec.egress ?? []).map(({ to, ports }) => ({ policy: policyName, peers: to, ports }));
  });
}

/**
 * Who reaches the gateway's admin port (the container port named admin): whether some NetworkPolicy
 * admits the console's pods, and everything else that opens it: a rule admitting any other peer (another
 * app's pods, every pod, a namespace, an address block, every source), an Ingress path to a Service
 * port that targets it, or a Service that is not ClusterIP.
 */
function adminPortExposure(objects: K8sObject[]): { consoleAdmitted: boolean; others: string[] } {
  const gateway = named(objects, 'Deployment', 'gateway');
  const labels = podTemplateOf(gateway).metadata.labels;
  const admin = appContainer(gateway).ports?.find((p) => p.name === 'admin');
  if (!admin) throw new Error('the gateway declares no port named admin');
  const others: string[] = [];
  let consoleAdmitted = false;
  for (const { policy, peers, ports } of rulesFor(objects, labels, 'Ingress')) {
    if (!coversPort(ports, admin)) continue;
    if (!peers || peers.length === 0) others.push(`NetworkPolicy ${policy}: every source`);
    for (const peer of peers ?? []) {
      const consoleOnly =
        peer.podSelector !== undefined &&
        peer.namespaceSelector === undefined &&
        peer.ipBlock === undefined &&
        peer.podSelector.matchLabels?.['app.kubernetes.io/name'] === 'console' &&
        appsSelectedBy(peer.podSelector, objects).join() === 'console';
      if (consoleOnly) consoleAdmitted = true;
      else others.push(`NetworkPolicy ${policy}: ${JSON.stringify(peer)}`);
    }
  }
  const adminServices = ofKind(objects, 'Service').filter((s) => {
    const spec = specOf<ServiceSpec>(s);
    return (
      matches({ matchLabels: spec.selector }, labels) &&
      spec.ports.some((p) => p.targetPort === admin.name || p.targetPort === admin.containerPort)
    );
  });
  for (const service of adminServices) {
    const { type = 'ClusterIP', ports } = specOf<ServiceSpec>(service);
    if (type !== 'ClusterIP')
      others.push(`Service ${service.metadata.name}: type ${type} opens the admin port outside the cluster`);
    const adminPortNames = ports
      .filter((p) => p.targetPort === admin.name || p.targetPort === admin.containerPort)
      .map((p) => p.name);
    for (const ingress of ofKind(objects, 'Ingress'))
      for (const rule of specOf<IngressSpec>(ingress).rules)
        for (const { path, backend } of rule.http.paths)
          if (backend.service.name === service.metadata.name && adminPortNames.includes(backend.service.port.name))
            others.push(
              `Ingress ${ingress.metadata.name}: ${path} goes to the admin port (Service ${service.metadata.name})`,
            );
  }
  return { consoleAdmitted, others };
}

/**
 * Where an app's pods may connect, as "<apps>:<port>" per peer and port of every egress rule that
 * applies to them ("anywhere" for a rule with no peers, "any" for no ports); cluster DNS left out.
 */
function egressOf(app: string, objects: K8sObject[]): string[] {
  const labels = podTemplateOf(named(objects, 'Deployment', app)).metadata.labels;
  const isDns = (peers: NetworkPolicyPeer[] | undefined, ports: NetworkPolicyPort[] | undefined) =>
    (peers ?? []).length > 0 &&
    (peers ?? []).every((p) => p.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns') &&
    (ports ?? []).length > 0 &&
    (ports ?? []).every((p) => p.port === 53);
  return rulesFor(objects, labels, 'Egress')
    .filter(({ peers, ports }) => !isDns(peers, ports))
    .flatMap(({ peers, ports }) => {
      const to =
        peers && peers.length > 0
          ? peers.map((peer) =>
              peer.podSelector && !peer.namespaceSelector && !peer.ipBlock
                ? appsSelectedBy(peer.podSelector, objects).join('+')
                : JSON.stringify(peer),
            )
          : ['anywhere'];
      const on = ports && ports.length > 0 ? ports.map((p) => String(p.port ?? 'any')) : ['any'];
      return to.flatMap((peer) => on.map((port) => `${peer}:${port}`));
    });
}

/** As egressOf, for the pods of any workload by their labels (a Job's, say). */
function egressOfPod(labels: Record<string, string>, objects: K8sObject[]): string[] {
  const isDns = (peers: NetworkPolicyPeer[] | undefined) =>
    (peers ?? []).length > 0 && (peers ?? []).every((p) => p.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns');
  return rulesFor(objects, labels, 'Egress')
    .filter(({ peers }) => !isDns(peers))
    .flatMap(({ peers, ports }) => {
      const to = peers && peers.length > 0 ? peers.map((peer) => JSON.stringify(peer)) : ['anywhere'];
      const on = ports && ports.length > 0 ? ports.map((p) => String(p.port ?? 'any')) : ['any'];
      return to.flatMap((peer) => on.map((port) => `${peer}:${port}`));
    });
}

/** Each probe's HTTP path and the container port number it hits (a named port resolved). */
function probePorts(container: Container): Record<string, { path: string; port: number | undefined }> {
  const probes = {
    readinessProbe: container.readinessProbe,
    livenessProbe: container.livenessProbe,
    startupProbe: container.startupProbe,
  };
  return Object.fromEntries(
    Object.entries(probes).map(([kind, probe]) => {
      const target = probe?.httpGet?.port;
      const port = (container.ports ?? []).find((p) => p.name === target || p.containerPort === target)?.containerPort;
      return [kind, { path: probe?.httpGet?.path ?? '(none)', port }];
    }),
  );
}

/** Runs `load` with `env`, returning every variable it looked up (as configuration-reference.test.ts). */
function readsOf(load: Loader, env: Env): Set<string> {
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

/** The variables of docs/configuration.md's OpenTelemetry section (read by libs/telemetry, not a loader). */
function telemetryVariables(): string[] {
  const text = readFileSync(join(repoRoot, 'docs', 'configuration.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith(TELEMETRY_SECTION));
  if (!section) throw new Error(`docs/configuration.md has no "## ${TELEMETRY_SECTION}" section`);
  return [...section.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1]);
}

/**
 * A Secret's values as an operator fills them: git holds the keys with empty values. Each key gets a
 * value of the form its variable requires (an Ed25519 PEM, 32 bytes of base64, a URL), kept for the run.
 */
function exampleSecrets(secret: K8sObject): Record<string, string> {
  return Object.fromEntries(
    Object.entries(dataOf(secret)).map(([key, value]) => {
      if (value !== '') return [key, value];
      if (!exampleValues.has(key)) exampleValues.set(key, exampleValue(key));
      return [key, exampleValues.get(key)!];
    }),
  );
}

function exampleValue(key: string): string {
  if (key === 'JWT_PRIVATE_KEY')
    return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  if (key === 'CREDENTIALS_ENCRYPTION_KEY' || key === 'CONSOLE_SESSION_KEY') return randomBytes(32).toString('base64');
  if (key === 'DATABASE_URL') return 'postgres://payments:secret@postgres.example.com:5432/receivables';
  return `p${randomBytes(12).toString('hex')}`;
}

/** The StatefulSet's nats.conf, from the ConfigMap its pods mount. */
function natsConfig(nats: K8sObject, objects: K8sObject[]): string {
  return dataOf(named(objects, 'ConfigMap', configMapVolume(nats, 'cluster-config')))['nats.conf'];
}

function configMapVolume(workload: K8sObject, volume: string): string {
  const spec = podTemplateOf(workload).spec as { volumes?: { name: string; configMap?: { name: string } }[] };
  const name = spec.volumes?.find((v) => v.name === volume)?.configMap?.name;
  if (!name) throw new Error(`${workload.metadata.name} has no ConfigMap volume ${volume}`);
  return name;
}

/**
 * What a NATS pod does at start, replayed here: the init container's own script runs with its mounts
 * as temporary folders (the ConfigMaps' files: deploy/nats's template and render.sh unchanged, and
 * nats.conf) and its environment (BUS_PREFIX, the nats-users Secret); then `nats-server -t` checks the
 * config it wrote with the server container's environment. With one password empty the script stops.
 */
function checkNatsConfig(nats: K8sObject, objects: K8sObject[]): void {
  const users = dataOf(named(objects, 'ConfigMap', configMapVolume(nats, 'bus-users')));
  expect(users['nats-server.conf.template']).toBe(
    readFileSync(join(repoRoot, 'deploy', 'nats', 'nats-server.conf.template'), 'utf8'),
  );
  const [init] = podTemplateOf(nats).spec.initContainers ?? [];
  const [server] = podTemplateOf(nats).spec.containers;
  const initEnv = containerEnv(init, objects, exampleSecrets);
  const serverEnv = containerEnv(server, objects, exampleSecrets);
  // The passwords come from the Secret's files, never from the environment.
  expect(Object.keys(initEnv).filter((k) => k.includes('PASSWORD'))).toEqual([]);
  expect(Object.keys(serverEnv).filter((k) => k.includes('PASSWORD'))).toEqual([]);
  const dir = mkdtempSync(join(tmpdir(), 'k8s-nats-'));
  try {
    const runInit = (secrets: (secret: K8sObject) => Record<string, string>) => {
      rmSync(dir, { recursive: true, force: true });
      const script = mountVolumes(nats, init, objects, dir, secrets);
      return spawnSync(script[0], script.slice(1), { env: { PATH: process.env.PATH, ...initEnv }, encoding: 'utf8' });
    };
    const withValue = (key: string, value: string) => (secret: K8sObject) => {
      const values = exampleSecrets(secret);
      return key in values ? { ...values, [key]: value } : values;
    };
    const refusedEmpty = runInit(withValue('NATS_CALLBACK_SVC_PASSWORD', ''));
    expect({ status: refusedEmpty.status, stderr: refusedEmpty.stderr.trim() }).toEqual({
      status: 1,
      stderr: 'NATS_CALLBACK_SVC_PASSWORD is empty: set it in Secret nats-users',
    });
    const refusedQuote = runInit(withValue('NATS_SYSTEM_PASSWORD', 'p"; x'));
    expect({ status: refusedQuote.status, stderr: refusedQuote.stderr.trim() }).toEqual({
      status: 1,
      stderr: 'NATS_SYSTEM_PASSWORD must hold only letters and digits',
    });
    const rendered = runInit(exampleSecrets);
    expect({ status: rendered.status, stderr: rendered.stderr }).toEqual({ status: 0, stderr: '' });
    const run = join(dir, volumeOf(init, '/run/nats'));
    const busUsers = readFileSync(join(run, 'bus-users.conf'), 'utf8');
    const natsConf = readFileSync(join(run, 'nats.conf'), 'utf8');
    expect(busUsers).toContain(`"${initEnv.BUS_PREFIX}.receivables.create"`);
    // Every password is written in; no reference to one is left for the environment to fill.
    const secret = exampleSecrets(named(objects, 'Secret', secretVolume(nats, 'users')));
    const config = `${busUsers}\n${natsConf}`.replace(/#.*$/gm, '');
    expect(config.match(/\$NATS_[A-Z_]*/g) ?? []).toEqual([]);
    expect(busUsers).toContain(`password: "${secret.NATS_GATEWAY_PASSWORD}"`);
    expect(natsConf).toContain(`password: "${secret.NATS_SYSTEM_PASSWORD}"`);
    const command = server.command ?? [];
    expect(command.slice(0, 2)).toEqual(['nats-server', '-c']);
    expect(command[2]).toBe('/run/nats/nats.conf');
    const bin = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
    const test = spawnSync(bin, ['-c', join(run, 'nats.conf'), '-t'], {
      env: { PATH: process.env.PATH, ...serverEnv },
      encoding: 'utf8',
    });
    if (test.error && (test.error as NodeJS.ErrnoException).code === 'ENOENT' && !process.env.CI) {
      console.warn(`nats-server not found at ${bin} (NATS_SERVER_BIN): the NATS config was not checked`);
      return;
    }
    expect({ status: test.status, output: `${test.stdout}${test.stderr}`.trim() }).toEqual({
      status: 0,
      output: expect.stringContaining('is valid'),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function secretVolume(workload: K8sObject, volume: string): string {
  const name = podTemplateOf(workload).spec.volumes?.find((v) => v.name === volume)?.secret?.secretName;
  if (!name) throw new Error(`${workload.metadata.name} has no Secret volume ${volume}`);
  return name;
}

/** The name of the volume a container mounts at `path`. */
function volumeOf(container: Container, path: string): string {
  const mount = (container.volumeMounts ?? []).find((m) => m.mountPath === path);
  if (!mount) throw new Error(`${container.name} mounts nothing at ${path}`);
  return mount.name;
}

/**
 * The container's command with each mount path replaced by a folder under `dir` named after its
 * volume, ConfigMap volumes filled with their files, Secret volumes with `secrets`' values, others empty.
 */
function mountVolumes(
  workload: K8sObject,
  container: Container,
  objects: K8sObject[],
  dir: string,
  secrets: (secret: K8sObject) => Record<string, string>,
): string[] {
  const volumes = podTemplateOf(workload).spec.volumes;
  let command = [...(container.command ?? [])];
  for (const mount of container.volumeMounts ?? []) {
    const folder = join(dir, mount.name);
    mkdirSync(folder, { recursive: true });
    const volume = volumes?.find((v) => v.name === mount.name);
    const files = volume?.configMap
      ? dataOf(named(objects, 'ConfigMap', volume.configMap.name))
      : volume?.secret
        ? secrets(named(objects, 'Secret', volume.secret.secretName))
        : {};
    for (const [file, text] of Object.entries(files)) writeFileSync(join(folder, file), text);
    command = command.map((part) => part.split(mount.mountPath).join(folder));
  }
  return command;
}

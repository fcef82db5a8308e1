import { join } from 'node:path';
import ts from 'typescript';
import type { K8sObject } from './manifests';

/**
 * kubernetes-models' validators accept fields the schema does not know (a misspelt `readinesProbe`
 * passes). Its type declarations list every field, so this walks each rendered object alongside the
 * declared type of its kind (the TypeScript checker reads kubernetes-models' .d.ts files) and names every
 * field that type does not have. Maps with free keys (labels, ConfigMap data) are left alone.
 */

/** `apiVersion/kind` to the kubernetes-models module and interface that declare it. */
const DECLARATIONS: Record<string, [module: string, name: string]> = {
  'v1/ConfigMap': ['kubernetes-models/v1/ConfigMap', 'IConfigMap'],
  'v1/Namespace': ['kubernetes-models/v1/Namespace', 'INamespace'],
  'v1/Secret': ['kubernetes-models/v1/Secret', 'ISecret'],
  'v1/Service': ['kubernetes-models/v1/Service', 'IService'],
  'apps/v1/Deployment': ['kubernetes-models/apps/v1/Deployment', 'IDeployment'],
  'apps/v1/StatefulSet': ['kubernetes-models/apps/v1/StatefulSet', 'IStatefulSet'],
  'batch/v1/Job': ['kubernetes-models/batch/v1/Job', 'IJob'],
  'autoscaling/v2/HorizontalPodAutoscaler': [
    'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    'IHorizontalPodAutoscaler',
  ],
  'networking.k8s.io/v1/Ingress': ['kubernetes-models/networking.k8s.io/v1/Ingress', 'IIngress'],
  'networking.k8s.io/v1/NetworkPolicy': ['kubernetes-models/networking.k8s.io/v1/NetworkPolicy', 'INetworkPolicy'],
  'policy/v1/PodDisruptionBudget': ['kubernetes-models/policy/v1/PodDisruptionBudget', 'IPodDisruptionBudget'],
};

export class KnownFields {
  private readonly checker: ts.TypeChecker;
  private readonly types = new Map<string, ts.Type>();

  constructor() {
    // A file that only names each declared type; resolved from deploy/test so node_modules is found.
    const file = join(__dirname, '__known-fields__.ts');
    const kinds = Object.keys(DECLARATIONS);
    const text = kinds
      .map((kind, i) => {
        const [module, name] = DECLARATIONS[kind];
        return `import type { ${name} as T${i} } from '${module}';\nexport declare const t${i}: T${i};`;
      })
      .join('\n');
    const options: ts.CompilerOptions = {
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version, ...rest) =>
      name === file ? ts.createSourceFile(name, text, version) : getSourceFile(name, version, ...rest);
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => name === file || fileExists(name);
    const program = ts.createProgram([file], options, host);
    this.checker = program.getTypeChecker();
    const source = program.getSourceFile(file)!;
    const exported = this.checker.getExportsOfModule(this.checker.getSymbolAtLocation(source)!);
    kinds.forEach((kind, i) => {
      const symbol = exported.find((s) => s.name === `t${i}`);
      if (!symbol) throw new Error(`known-fields: no declaration for ${kind}`);
      const type = this.checker.getTypeOfSymbol(symbol);
      if (this.checker.getPropertiesOfType(type).length === 0)
        throw new Error(`known-fields: ${DECLARATIONS[kind].join('.')} did not resolve`);
      this.types.set(kind, type);
    });
  }

  /** Paths of the fields of `object` its kind does not declare; undefined for a kind not covered. */
  unknownFields(object: K8sObject): string[] | undefined {
    const type = this.types.get(`${object.apiVersion}/${object.kind}`);
    return type && this.walk(object, type, '');
  }

  private walk(value: unknown, declared: ts.Type, path: string): string[] {
    const type = this.checker.getNonNullableType(declared);
    if (Array.isArray(value)) {
      const element = this.checker.getIndexTypeOfType(type, ts.IndexKind.Number);
      return element ? value.flatMap((v, i) => this.walk(v, element, `${path}[${i}]`)) : [];
    }
    if (value === null || typeof value !== 'object') return [];
    // A map with free keys (labels, annotations, data), or a value typed loosely: nothing to check.
    if (this.checker.getIndexTypeOfType(type, ts.IndexKind.String)) return [];
    const members = type.isUnion() ? type.types : [type];
    const properties = new Map(members.flatMap((t) => this.checker.getPropertiesOfType(t)).map((p) => [p.name, p]));
    if (properties.size === 0) return [];
    return Object.entries(value).flatMap(([key, field]) => {
      const property = properties.get(key);
      if (!property) return [`${path}.${key}`];
      return this.walk(field, this.checker.getTypeOfSymbol(property), `${path}.${key}`);
    });
  }
}

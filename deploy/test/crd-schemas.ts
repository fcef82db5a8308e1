import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import type { K8sObject } from './manifests';

/**
 * The custom kinds (KEDA's ScaledObject, CloudNativePG's Cluster, Pooler and ScheduledBackup, the Barman
 * Cloud plugin's ObjectStore) checked against their operators' own CRD schemas, vendored in
 * deploy/schemas (versions in its README), with ajv. Two things make this stricter than a plain
 * JSON-schema check and closer to what the API server does:
 * - a CRD schema lets unknown fields through (the API server prunes them silently), so every object
 *   schema that lists its properties is closed here (`additionalProperties: false`), except where the
 *   schema keeps unknown fields on purpose (`x-kubernetes-preserve-unknown-fields`): a misspelt field
 *   fails instead of vanishing;
 * - `nullable` and `x-kubernetes-int-or-string` are read as Kubernetes reads them.
 * Not checked: the CEL rules (`x-kubernetes-validations`), which only the API server evaluates, and
 * `metadata` beyond its being an object.
 */

export const SCHEMA_DIR = join(__dirname, '..', 'schemas');

type Schema = Record<string, unknown>;

interface Crd {
  spec: {
    group: string;
    names: { kind: string };
    versions: { name: string; served: boolean; schema?: { openAPIV3Schema: Schema } }[];
  };
}

export class CrdSchemas {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(dir: string = SCHEMA_DIR) {
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      const crd = parse(readFileSync(join(dir, file), 'utf8')) as Crd;
      for (const version of crd.spec.versions) {
        if (!version.served || !version.schema) continue;
        const kind = `${crd.spec.group}/${version.name}/${crd.spec.names.kind}`;
        this.validators.set(kind, ajv.compile(closed(version.schema.openAPIV3Schema)));
      }
    }
  }

  /** `apiVersion/kind` of every kind a vendored schema covers. */
  kinds(): string[] {
    return [...this.validators.keys()];
  }

  /** What is wrong with `object` by its CRD's schema ([] when valid); undefined for a kind not covered. */
  problems(object: K8sObject): string[] | undefined {
    const validate = this.validators.get(`${object.apiVersion}/${object.kind}`);
    if (!validate) return undefined;
    return validate(object) ? [] : (validate.errors ?? []).map(describe);
  }
}

function describe(error: ErrorObject): string {
  const extra = error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
  return `${error.instancePath || '/'} ${error.message ?? error.keyword}${extra}`;
}

/**
 * A copy of a CRD schema as JSON Schema that refuses unknown fields: `additionalProperties: false`
 * where an object lists its properties and neither keeps unknown fields nor gives its own
 * additionalProperties; `nullable: true` admits null; an int-or-string admits both.
 */
function closed(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && isSchemaMap(value))
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, closed(v)]));
    else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && isSchema(value))
      out[key] = closed(value);
    else if ((key === 'anyOf' || key === 'allOf' || key === 'oneOf') && Array.isArray(value))
      out[key] = value.map((v) => (isSchema(v) ? closed(v) : v));
    else if (key !== 'description') out[key] = value;
  }
  const preserves = schema['x-kubernetes-preserve-unknown-fields'] === true;
  // metadata is the API server's (ObjectMeta), which a CRD schema only types as an object.
  if (schema.properties !== undefined && !preserves && schema.additionalProperties === undefined)
    out.additionalProperties = false;
  if (schema['x-kubernetes-int-or-string'] === true) {
    delete out.type;
    if (out.anyOf === undefined) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSchemaMap(value: unknown): value is Record<string, Schema> {
  return isSchema(value) && Object.values(value).every(isSchema);
}

import { standardDefinitions } from './generated/standard-schemas';

// Each named schema stands alone for ajv: a reference to its definition beside all the definitions it may
// refer to (shared, not copied).
export const standardSchemas: Record<string, object> = Object.fromEntries(
  Object.keys(standardDefinitions).map((name) => [name, { $ref: `#/$defs/${name}`, $defs: standardDefinitions }]),
);

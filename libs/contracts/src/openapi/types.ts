/**
 * The part of the OpenAPI 3.1 object model this service's document uses. Schemas are plain JSON
 * Schema 2020-12 objects (OpenAPI 3.1 adopts that dialect), so they are typed as JSON values.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A JSON Schema as it appears in the document: a component, an inline schema or a `$ref`. */
export type SchemaObject = JsonObject;

export interface ExampleObject {
  summary?: string;
  description?: string;
  value: JsonValue;
}

export interface MediaTypeObject {
  schema: SchemaObject;
  examples?: Record<string, ExampleObject | ReferenceObject>;
}

export interface HeaderObject {
  description: string;
  required?: boolean;
  schema: SchemaObject;
  example?: JsonValue;
}

export interface ReferenceObject {
  $ref: string;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  description: string;
  required: boolean;
  schema: SchemaObject;
  example?: JsonValue;
}

export interface RequestBodyObject {
  description?: string;
  required: boolean;
  content: Record<string, MediaTypeObject>;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | ReferenceObject>;
  content?: Record<string, MediaTypeObject>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: SecurityRequirement[];
  parameters?: Array<ParameterObject | ReferenceObject>;
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject | ReferenceObject>;
}

export type HttpMethod = 'get' | 'post' | 'put';
export type PathItemObject = Partial<Record<HttpMethod, OperationObject>>;

export type SecuritySchemeObject =
  | { type: 'http'; scheme: 'bearer'; bearerFormat?: string; description: string }
  | { type: 'apiKey'; in: 'header'; name: string; description: string };

export interface OpenApiDocument {
  openapi: string;
  jsonSchemaDialect: string;
  info: { title: string; version: string; summary?: string; description: string };
  servers: Array<{ url: string; description: string }>;
  tags: Array<{ name: string; description: string }>;
  security: SecurityRequirement[];
  paths: Record<string, PathItemObject>;
  webhooks: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, SchemaObject>;
    securitySchemes: Record<string, SecuritySchemeObject>;
    headers: Record<string, HeaderObject>;
    parameters: Record<string, ParameterObject>;
    examples: Record<string, ExampleObject>;
  };
}

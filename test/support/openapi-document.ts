import Ajv2020 from 'ajv/dist/2020';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';

export const PROJECT_ROOT = join(__dirname, '..', '..');
export const OPENAPI_FILE = join(PROJECT_ROOT, 'openapi.yaml');

/** The parts of an OpenAPI 3.1 document these tests read. Everything else stays `unknown`. */
export interface HeaderObject {
  readonly description?: string;
  readonly required?: boolean;
  readonly schema?: Record<string, unknown>;
  readonly $ref?: string;
}

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Readonly<Record<string, HeaderObject>>;
  readonly content?: Readonly<
    Record<
      string,
      {
        readonly schema?: Record<string, unknown>;
        readonly examples?: Readonly<Record<string, { readonly value: unknown }>>;
      }
    >
  >;
  readonly $ref?: string;
}

export interface OperationObject {
  readonly operationId: string;
  readonly description?: string;
  readonly security?: readonly Record<string, readonly string[]>[];
  readonly responses: Readonly<Record<string, ResponseObject>>;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: { readonly description: string };
  readonly servers: readonly {
    readonly url: string;
    readonly variables?: Readonly<Record<string, { readonly default: string }>>;
  }[];
  readonly security: readonly Record<string, readonly string[]>[];
  readonly paths: Readonly<Record<string, Readonly<Record<string, OperationObject>>>>;
  readonly components: {
    readonly securitySchemes: Readonly<Record<string, { type: string; in: string; name: string }>>;
    readonly responses: Readonly<Record<string, ResponseObject>>;
    readonly headers: Readonly<Record<string, HeaderObject>>;
    readonly schemas: Readonly<Record<string, Record<string, unknown>>>;
  };
}

export function loadOpenApiText(): string {
  return readFileSync(OPENAPI_FILE, 'utf8');
}

export function loadOpenApiDocument(): OpenApiDocument {
  return parse(loadOpenApiText()) as OpenApiDocument;
}

/** Follows a local `$ref` (`#/components/...`) to what it names; anything else is returned as it is. */
export function resolve<T extends { readonly $ref?: string }>(document: OpenApiDocument, value: T): T {
  let current: unknown = value;
  for (let hops = 0; hops < 10; hops++) {
    const ref = (current as { $ref?: unknown }).$ref;
    if (typeof ref !== 'string') return current as T;
    current = pointer(document, ref);
  }
  throw new Error(`$ref chain too long at ${String(value.$ref)}`);
}

/** The value a local JSON pointer (`#/a/b~1c`) names in the document; throws when it names nothing. */
export function pointer(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`not a local $ref: ${ref}`);
  let current: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) {
      throw new Error(`$ref ${ref} names nothing`);
    }
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Every `$ref` string anywhere in the document. */
export function allRefs(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(allRefs);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) =>
    key === '$ref' && typeof child === 'string' ? [child] : allRefs(child),
  );
}

export interface ValidatorVerdict {
  readonly valid: boolean;
  readonly version?: string;
  readonly errors?: unknown;
}

/**
 * Validates a document with @seriousme/openapi-schema-validator (the OpenAPI Initiative's JSON Schemas for each
 * version). The package is ES-module only, which jest's CommonJS runtime cannot load on this Node, so it runs
 * in a Node process of its own.
 */
export async function validateOpenApi(text: string): Promise<ValidatorVerdict> {
  const driver = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    import { readFileSync } from 'node:fs';
    const validator = new Validator();
    const result = await validator.validate(readFileSync(0, 'utf8'));
    process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
  `;
  const child = promisify(execFile)(process.execPath, ['--input-type=module', '-e', driver], {
    cwd: PROJECT_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  child.child.stdin?.end(text);
  const { stdout } = await child;
  return JSON.parse(stdout) as ValidatorVerdict;
}

/** One HTTP answer as the tests received it. */
export interface ReceivedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/**
 * Checks answers against the document: the status is documented for the operation (or its 4XX/5XX range),
 * the media type is one the response declares, the body matches its schema, and every required header is
 * present with a value its schema allows. A path the document does not list is checked against the NotFound
 * response, as the document says.
 */
export class AnswerValidator {
  // strictTypes off: the allOf parts that only narrow `code` name no `type` of their own, valid JSON Schema.
  private readonly ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  /** The document's named schemas, registered as one JSON Schema so references between them resolve. */
  private readonly schemasId = 'openapi-components-schemas';

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addSchema({ $id: this.schemasId, $defs: this.anchored(document.components.schemas) });
  }

  /** A schema taken out of the document, its `#/components/schemas/X` references aimed at the registered ones. */
  private anchored(schema: unknown): Record<string, unknown> {
    const prefix = '#/components/schemas/';
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (typeof value !== 'object' || value === null) return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, child]) => [
          key,
          key === '$ref' && typeof child === 'string' && child.startsWith(prefix)
            ? `${this.schemasId}#/$defs/${child.slice(prefix.length)}`
            : rewrite(child),
        ]),
      );
    };
    return rewrite(schema) as Record<string, unknown>;
  }

  /** The documented response for this answer, or undefined when the status is not documented. */
  responseFor(method: string, path: string, status: number): ResponseObject | undefined {
    const pathItem = this.document.paths[path];
    if (pathItem === undefined) {
      return status === 404 ? this.document.components.responses.NotFound : undefined;
    }
    const operation = pathItem[method.toLowerCase()];
    if (operation === undefined) return undefined;
    const range = `${String(status)[0] ?? ''}XX`;
    const response = operation.responses[String(status)] ?? operation.responses[range];
    return response === undefined ? undefined : resolve(this.document, response);
  }

  /** Every way the answer departs from the document; empty when it conforms. */
  problems(method: string, path: string, answer: ReceivedAnswer): string[] {
    const response = this.responseFor(method, path, answer.status);
    if (response === undefined) return [`${method} ${path}: status ${answer.status} is not documented`];
    const problems: string[] = [];

    const contentType = String(answer.headers['content-type'] ?? '')
      .split(';', 1)[0]
      ?.trim()
      .toLowerCase();
    const media = response.content?.[contentType ?? ''];
    if (media?.schema === undefined) {
      problems.push(`media type ${contentType ?? '(none)'} is not documented`);
    } else {
      const validate = this.ajv.compile(this.anchored(media.schema));
      let body: unknown;
      try {
        body = JSON.parse(answer.body);
      } catch {
        problems.push('body is not JSON');
      }
      if (body !== undefined && !validate(body))
        problems.push(`body: ${this.ajv.errorsText(validate.errors)}`);
    }

    for (const [name, declared] of Object.entries(response.headers ?? {})) {
      const header = resolve(this.document, declared);
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (header.schema !== undefined) {
        const validate = this.ajv.compile(this.anchored(header.schema));
        if (!validate(value)) problems.push(`header ${name}: ${this.ajv.errorsText(validate.errors)}`);
      }
    }
    return problems;
  }
}

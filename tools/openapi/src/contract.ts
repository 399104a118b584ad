import { Ajv2020 } from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * Checks real HTTP answers against the OpenAPI document: the status must be documented for
 * the operation, every documented header present and valid, the content type the
 * documented one, and the body valid against the documented JSON Schema (Ajv, draft
 * 2020-12, the dialect of OpenAPI 3.1). Also checks that a request body the server accepted
 * is valid against the documented request schema. Records which (operation, status) pairs
 * were seen, so a test can require that every operation was exercised.
 */

type Json = Record<string, unknown>;

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const DOCUMENT_ID = 'https://svc.invalid/openapi.json';

const pointer = (...parts: string[]): string => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export class ContractChecker {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly seen = new Set<string>();

  constructor(private readonly document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  /** The operation object of a method and a path template (`/v1/keys/{id}`). */
  operation(method: string, path: string): Json {
    const paths = this.document.paths as Record<string, Record<string, Json>>;
    const op = paths[path]?.[method.toLowerCase()];
    if (op === undefined) throw new Error(`${method} ${path} is not documented`);
    return op;
  }

  private validator(location: string): ValidateFunction {
    let validate = this.compiled.get(location);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/${location}` });
      this.compiled.set(location, validate);
    }
    return validate;
  }

  private resolve(node: Json): Json {
    const target = node.$ref;
    if (typeof target !== 'string') return node;
    let current: unknown = this.document;
    for (const part of target.replace(/^#\//, '').split('/')) current = (current as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return current as Json;
  }

  /** Problems of an answer, as readable lines (empty when it matches the document). */
  problems(method: string, path: string, answer: Answer): string[] {
    const op = this.operation(method, path);
    const responses = op.responses as Record<string, Json>;
    const response = responses[String(answer.status)];
    if (response === undefined) return [`${method} ${path}: status ${answer.status} is not documented (body ${answer.text.slice(0, 300)})`];
    this.seen.add(`${method.toUpperCase()} ${path} ${answer.status}`);
    const out: string[] = [];
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const value = answer.headers.get(name);
      if (value === null) {
        out.push(`${method} ${path} ${answer.status}: header ${name} is missing`);
        continue;
      }
      const schema = this.resolve(header).schema as Json;
      const typed = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      const check = this.ajv.validate(schema, typed);
      if (!check) out.push(`${method} ${path} ${answer.status}: header ${name}: ${this.ajv.errorsText()}`);
    }
    const content = response.content as Record<string, Json> | undefined;
    if (content === undefined) {
      if (answer.text !== '') out.push(`${method} ${path} ${answer.status}: a body where none is documented`);
      return out;
    }
    const contentType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    if (content[contentType] === undefined) {
      out.push(`${method} ${path} ${answer.status}: content type "${contentType}", documented ${Object.keys(content).join(', ')}`);
      return out;
    }
    if (contentType !== 'application/json') return out;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...out, `${method} ${path} ${answer.status}: the body is not JSON`];
    }
    const validate = this.validator(pointer('paths', path, method.toLowerCase(), 'responses', String(answer.status), 'content', contentType, 'schema'));
    if (!validate(body)) out.push(`${method} ${path} ${answer.status}: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}\n  body: ${answer.text.slice(0, 500)}`);
    return out;
  }

  /** Problems of a request body the server accepted, against the documented request schema. */
  requestProblems(method: string, path: string, body: unknown): string[] {
    const op = this.operation(method, path);
    if (op.requestBody === undefined) return [`${method} ${path}: no request body is documented`];
    const validate = this.validator(pointer('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'));
    return validate(body) ? [] : [`${method} ${path} request: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`];
  }

  /** The body schema of the 4xx/5xx error answers, for answers outside any operation (404, 405). */
  errorProblems(answer: Answer): string[] {
    const validate = this.validator(pointer('components', 'schemas', 'ErrorResponse'));
    const requestId = answer.headers.get('x-svc-request-id');
    const out: string[] = [];
    if (requestId === null) out.push(`status ${answer.status}: no x-svc-request-id`);
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...out, `status ${answer.status}: the body is not JSON`];
    }
    if (!validate(body)) out.push(`status ${answer.status}: ${this.ajv.errorsText(validate.errors)}`);
    return out;
  }
}

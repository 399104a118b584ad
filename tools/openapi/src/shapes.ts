/**
 * Compares two JSON Schemas by the shape of the data they describe: object fields and which
 * are required, array items, unions of objects, and the types and values of scalars
 * (`integer` is its own type: a `number` side accepts it, an `integer` side does not accept
 * `number`). Used to compare the SDK's TypeScript types (as JSON Schema, from
 * ts-json-schema-generator, which reads the SDK's `Integer` as `integer`) with the OpenAPI
 * document's schemas, and every copy of an answer with its one source in @svc/contracts
 * (answer-schemas.spec.ts). `$ref`s are resolved within each schema's own root.
 */

type Json = Record<string, unknown>;

export type Shape =
  | { kind: 'object'; props: Record<string, Shape>; required: string[] }
  | { kind: 'array'; items: Shape }
  | { kind: 'union'; variants: Shape[] }
  | { kind: 'scalar'; types: string[]; values: unknown[] | null };

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function resolveRef(root: Json, ref: string): Json {
  let current: unknown = root;
  for (const raw of ref.replace(/^#\//, '').split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    current = isJson(current) ? current[part] : undefined;
  }
  if (!isJson(current)) throw new Error(`cannot resolve ${ref}`);
  return current;
}

const typeOfValue = (value: unknown): string => (value === null ? 'null' : typeof value === 'number' ? 'number' : typeof value);

/** The shape of a schema (`root` is the document its `$ref`s point into). */
export function shapeOf(schema: Json, root: Json, depth = 0): Shape {
  if (depth > 40) throw new Error('schema too deep');
  if (typeof schema.$ref === 'string') return shapeOf(resolveRef(root, schema.$ref), root, depth + 1);
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives !== undefined) {
    const variants = alternatives.flatMap((variant) => {
      const shape = shapeOf(variant, root, depth + 1);
      return shape.kind === 'union' ? shape.variants : [shape];
    });
    if (variants.every((v) => v.kind === 'scalar')) {
      const scalars = variants as Extract<Shape, { kind: 'scalar' }>[];
      const types = [...new Set(scalars.flatMap((v) => v.types))].sort();
      const values = scalars.every((v) => v.values !== null) ? scalars.flatMap((v) => v.values ?? []) : null;
      return { kind: 'scalar', types, values };
    }
    return variants.length === 1 && variants[0] !== undefined ? variants[0] : { kind: 'union', variants };
  }
  // `type: ["array", "null"]` (a nullable list, as @nestjs/swagger writes it for OpenAPI 3.1): the array or the other types.
  if (Array.isArray(schema.type) && schema.type.includes('array') && schema.type.length > 1) {
    const others = (schema.type as string[]).filter((type) => type !== 'array');
    return shapeOf({ anyOf: [{ ...schema, type: 'array' }, { type: others }] }, root, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && isJson(schema.allOf[0])) return shapeOf(schema.allOf[0], root, depth + 1);
  if (isJson(schema.properties) || schema.type === 'object') {
    const props: Record<string, Shape> = {};
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) props[name] = shapeOf(property, root, depth + 1);
    return { kind: 'object', props, required: [...((schema.required ?? []) as string[])].sort() };
  }
  if (schema.type === 'array') return { kind: 'array', items: isJson(schema.items) ? shapeOf(schema.items, root, depth + 1) : { kind: 'scalar', types: [], values: null } };
  if ('const' in schema) return { kind: 'scalar', types: [typeOfValue(schema.const)], values: [schema.const] };
  if (Array.isArray(schema.enum)) return { kind: 'scalar', types: [...new Set(schema.enum.map(typeOfValue))].sort(), values: schema.enum };
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  const normal = [...new Set(types)].sort();
  return { kind: 'scalar', types: normal, values: normal.length === 1 && normal[0] === 'null' ? [null] : null };
}

/** Whether a side whose scalar types are `wide` accepts a value of type `type` (a number accepts an integer). */
const accepts = (wide: readonly string[], type: string): boolean => wide.includes(type) || (type === 'integer' && wide.includes('number'));

/** What the two sides are called in the problems found. */
export interface SideNames {
  client: string;
  server: string;
}

/**
 * Where `client` (the SDK) and `server` (the document) disagree. For a response the client
 * must accept every type and value the server may send; for a request the server must
 * accept everything the client may send; `exact`: the two describe the same types and
 * values (a copy against its source); `exact-types`: the same, but where the server lists
 * its values the client may take any value of the type (the SDK's model is any string, so
 * that a new catalog model needs no new SDK). Field names and required fields must match
 * exactly.
 */
export function shapeProblems(client: Shape, server: Shape, direction: 'response' | 'request' | 'exact' | 'exact-types', at = '$', names: SideNames = { client: 'SDK', server: 'document' }): string[] {
  const [mine, theirs] = [names.client, names.server];
  if (client.kind !== server.kind) return [`${at}: the ${mine} has ${client.kind}, the ${theirs} ${server.kind}`];
  switch (client.kind) {
    case 'object': {
      const other = server as Extract<Shape, { kind: 'object' }>;
      const out: string[] = [];
      const clientFields = Object.keys(client.props).sort();
      const serverFields = Object.keys(other.props).sort();
      for (const field of serverFields) if (!clientFields.includes(field)) out.push(`${at}.${field}: in the ${theirs}, not in the ${mine}`);
      for (const field of clientFields) if (!serverFields.includes(field)) out.push(`${at}.${field}: in the ${mine}, not in the ${theirs}`);
      if (client.required.join() !== other.required.join()) out.push(`${at}: required fields differ: ${mine} [${client.required.join(', ')}], ${theirs} [${other.required.join(', ')}]`);
      for (const field of clientFields) {
        const a = client.props[field];
        const b = other.props[field];
        if (a !== undefined && b !== undefined) out.push(...shapeProblems(a, b, direction, `${at}.${field}`, names));
      }
      return out;
    }
    case 'array':
      return shapeProblems(client.items, (server as Extract<Shape, { kind: 'array' }>).items, direction, `${at}[]`, names);
    case 'union': {
      const other = server as Extract<Shape, { kind: 'union' }>;
      const out: string[] = [];
      if (client.variants.length !== other.variants.length) out.push(`${at}: the ${mine} has ${client.variants.length} variants, the ${theirs} ${other.variants.length}`);
      other.variants.forEach((variant, index) => {
        if (!client.variants.some((own) => shapeProblems(own, variant, direction, '$', names).length === 0)) out.push(`${at}: the ${theirs}'s variant ${index + 1} matches no ${mine} variant`);
      });
      return out;
    }
    case 'scalar': {
      const other = server as Extract<Shape, { kind: 'scalar' }>;
      const out: string[] = [];
      const typesDiffer = `${at}: types ${mine} [${client.types.join(', ')}], ${theirs} [${other.types.join(', ')}]`;
      if (direction === 'exact' || direction === 'exact-types') {
        if (client.types.join() !== other.types.join()) out.push(typesDiffer);
        const sorted = (values: unknown[] | null): string => JSON.stringify(values === null ? null : values.map((v) => JSON.stringify(v)).sort());
        const openClient = direction === 'exact-types' && client.values === null;
        if (!openClient && sorted(client.values) !== sorted(other.values)) out.push(`${at}: values ${mine} ${JSON.stringify(client.values)}, ${theirs} ${JSON.stringify(other.values)}`);
        return out;
      }
      const [wide, narrow] = direction === 'response' ? [client, other] : [other, client];
      if (wide.types.length > 0) {
        const extra = narrow.types.filter((type) => !accepts(wide.types, type));
        if (extra.length > 0 || narrow.types.length === 0) out.push(typesDiffer);
      }
      if (wide.values !== null) {
        if (narrow.values === null) out.push(`${at}: the ${direction === 'response' ? mine : theirs} allows only ${JSON.stringify(wide.values)}`);
        else {
          const extra = narrow.values.filter((value) => !wide.values?.includes(value));
          if (extra.length > 0) out.push(`${at}: values ${JSON.stringify(extra)} are allowed by the ${direction === 'response' ? theirs : mine} only`);
        }
      }
      return out;
    }
    default: {
      const unreachable: never = client;
      return unreachable;
    }
  }
}

import { shapeOf } from './shapes';
import type { Shape } from './shapes';

/**
 * Reads the field tables of docs/api.md and compares them with the OpenAPI document. A
 * table is checked when the line before it names the document's schema it describes:
 *
 *   <!-- fields: SearchResponse -->         every field of the schema is in the table
 *   <!-- fields: SearchBody partial -->     the table describes some of its fields
 *
 * (an HTML comment: it does not show when the page is rendered). What is checked:
 * - every field the table names exists in the schema (`a.b` and `a[].b` reach into objects
 *   and arrays; a bare name that is not at the top is looked for below it);
 * - unless `partial`, every field of the schema is in the table (request_id, which every
 *   answer carries, is section 3's), and every field of an object the table reaches into;
 * - the Type column, where there is one: `string`, `number`, `integer`, `boolean`, `null`,
 *   `timestamp`, `array`/`…[]`/`array of …`, `object`, quoted values (`"daily"`), joined by
 *   `,` and `or`, the same types (integer is not number) and values as the schema;
 * - required or not: a request table's field is required when its rule starts with
 *   "required"; a response field is optional when its row says "absent" or its When column
 *   says anything but "always";
 * - statements in a row: "always `X`" (or "always null") means the schema allows X alone;
 *   "never null" means it does not allow null.
 */

type Json = Record<string, unknown>;
type ObjectShape = Extract<Shape, { kind: 'object' }>;

export interface DocumentedTable {
  /** The line of the table's header (1-based). */
  line: number;
  schema: string;
  partial: boolean;
  header: string[];
  rows: string[][];
}

const MARKER = /^<!--\s*fields:\s*(\w+)(\s+partial)?\s*-->\s*$/;

/** The marked tables of a Markdown text. */
export function markedTables(markdown: string): DocumentedTable[] {
  const lines = markdown.split('\n');
  const tables: DocumentedTable[] = [];
  lines.forEach((text, index) => {
    const marker = MARKER.exec(text.trim());
    if (marker === null) return;
    const cells = (row: string): string[] => row.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((cell) => cell.trim());
    const header = lines[index + 1];
    if (header === undefined || !header.trim().startsWith('|')) throw new Error(`docs line ${index + 1}: a fields marker must stand right above its table`);
    const rows: string[][] = [];
    for (let at = index + 3; at < lines.length && (lines[at] ?? '').trim().startsWith('|'); at += 1) rows.push(cells(lines[at] ?? ''));
    tables.push({ line: index + 2, schema: marker[1] ?? '', partial: marker[2] !== undefined, header: cells(header).map((h) => h.toLowerCase()), rows });
  });
  return tables;
}

/** The field names of a row's first cell: "`a`, `b`" names two; a bare second name is the first one's sibling. */
export function fieldNames(cell: string): string[] {
  const names = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
  const first = names[0] ?? '';
  const parent = first.includes('.') ? first.slice(0, first.lastIndexOf('.') + 1) : '';
  return names.map((name, index) => (index > 0 && parent !== '' && !name.includes('.') && !name.includes('[]') ? `${parent}${name}` : name));
}

interface Documented {
  types: string[];
  values: unknown[] | null;
}

/** The types and values a Type cell states; null when it states none. */
export function documentedType(cell: string): Documented | null {
  const text = cell.trim();
  if (text === '') return null;
  const values = [...text.matchAll(/`"([^"`]*)"`/g)].map((m) => m[1]);
  const rest = text.replace(/`"[^"`]*"`/g, ' ');
  const types = new Set<string>();
  for (const raw of rest.split(/,|\bor\b/)) {
    const word = raw.trim().toLowerCase();
    if (word === '') continue;
    if (/^array( of \w+)?$/.test(word) || word.endsWith('[]')) types.add('array');
    else if (word === 'timestamp' || word === 'string') types.add('string');
    else if (['number', 'integer', 'boolean', 'null', 'object'].includes(word)) types.add(word);
    else throw new Error(`unknown type "${word}" in "${cell}"`);
  }
  if (values.length > 0) types.add('string');
  if (types.has('null') && values.length > 0) values.push(null as unknown as string);
  return { types: [...types].sort(), values: values.length > 0 ? values : null };
}

/** Every object shape a union stands for, or the shape itself. */
const objectsOf = (shape: Shape): ObjectShape[] => (shape.kind === 'object' ? [shape] : shape.kind === 'union' ? shape.variants.flatMap(objectsOf) : []);

/** The shape at a path (`a.b`, `a[].b`, `a[]`) below `shape`, or undefined. */
export function shapeAt(shape: Shape, path: string): Shape | undefined {
  let current: Shape | undefined = shape;
  for (const part of path.split('.')) {
    const array = part.endsWith('[]');
    const name = array ? part.slice(0, -2) : part;
    const found: Shape | undefined = current === undefined ? undefined : objectsOf(current).map((object) => object.props[name]).find((prop) => prop !== undefined);
    if (found === undefined) return undefined;
    current = array ? (found.kind === 'array' ? found.items : undefined) : found;
  }
  return current;
}

/** Whether `field` is required in its object below `shape`. */
function requiredAt(shape: Shape, path: string): boolean {
  const parts = path.split('.');
  const last = (parts.pop() ?? '').replace(/\[\]$/, '');
  const parent = parts.length === 0 ? shape : shapeAt(shape, parts.join('.'));
  if (parent === undefined) return false;
  return objectsOf(parent).some((object) => object.required.includes(last));
}

/** Where a name is, when it is not at the top: the first path below the schema that ends in it. */
function findBelow(shape: Shape, name: string, prefix = '', depth = 0): string | undefined {
  if (depth > 6) return undefined;
  for (const object of objectsOf(shape)) {
    if (object.props[name] !== undefined) return `${prefix}${name}`;
    for (const [field, prop] of Object.entries(object.props)) {
      const inner = prop.kind === 'array' ? prop.items : prop;
      const hit = findBelow(inner, name, `${prefix}${field}${prop.kind === 'array' ? '[]' : ''}.`, depth + 1);
      if (hit !== undefined) return hit;
    }
  }
  return undefined;
}

const typesOf = (shape: Shape): Documented => {
  if (shape.kind === 'scalar') {
    const values = shape.values;
    return { types: shape.types, values: values !== null && !(values.length === 1 && values[0] === null) ? values : null };
  }
  if (shape.kind === 'union') {
    // A nullable list or object: the types of every variant (`array or null`).
    return { types: [...new Set(shape.variants.flatMap((variant) => typesOf(variant).types))].sort(), values: null };
  }
  return { types: [shape.kind === 'array' ? 'array' : 'object'], values: null };
};

/** Where a marked table differs from the document (`document` is the whole OpenAPI document). */
export function tableProblems(table: DocumentedTable, document: Json): string[] {
  const at = `docs/api.md:${table.line} (${table.schema})`;
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  if (schemas[table.schema] === undefined) return [`${at}: no schema ${table.schema} in the document`];
  const root = shapeOf({ $ref: `#/components/schemas/${table.schema}` }, document);
  const typeColumn = table.header.indexOf('type');
  const whenColumn = table.header.indexOf('when');
  // A request's table states rules (what is accepted); an answer's, meanings.
  const ruleColumn = table.header.findIndex((h) => h === 'rule' || h === 'accepts');
  const request = ruleColumn > 0;
  const problems: string[] = [];
  const documented = new Set<string>();
  const written = new Set<string>();
  for (const row of table.rows) {
    const rowText = row.slice(1).join(' | ');
    for (const full of fieldNames(row[0] ?? '')) {
      // `results[]`: the array field itself.
      const name = full.replace(/\[\]$/, '');
      const path = shapeAt(root, name) !== undefined ? name : findBelow(root, name);
      const shape = path === undefined ? undefined : shapeAt(root, path);
      if (path === undefined || shape === undefined) {
        problems.push(`${at}: \`${full}\` is not a field of ${table.schema}`);
        continue;
      }
      documented.add(path);
      if (name.includes('.')) written.add(name);
      if (typeColumn > 0) {
        const stated = documentedType(row[typeColumn] ?? '');
        if (stated !== null) {
          const actual = typesOf(shape);
          if (stated.types.join() !== actual.types.join()) problems.push(`${at}: \`${name}\` is documented as ${stated.types.join(' or ')}, the document says ${actual.types.join(' or ')}`);
          else if (stated.values !== null && JSON.stringify([...stated.values].map(String).sort()) !== JSON.stringify([...(actual.values ?? [])].map(String).sort())) {
            problems.push(`${at}: \`${name}\` is documented as ${JSON.stringify(stated.values)}, the document allows ${JSON.stringify(actual.values)}`);
          }
        }
      }
      const required = requiredAt(root, path);
      if (request) {
        const says = /^required\b/i.test((row[ruleColumn] ?? '').trim());
        if (says !== required) problems.push(`${at}: \`${name}\` is documented as ${says ? 'required' : 'optional'}, the document says ${required ? 'required' : 'optional'}`);
      } else {
        const optional = /\babsent\b/i.test(rowText) || (whenColumn > 0 && (row[whenColumn] ?? '').trim().toLowerCase() !== 'always');
        if (optional === required) problems.push(`${at}: \`${name}\` is documented as ${optional ? 'optional' : 'always present'}, the document says ${required ? 'required' : 'optional'}`);
      }
      const always = /\balways (null\b|`([^`]+)`)/i.exec(rowText);
      if (always !== null) {
        const value = always[2] === undefined || always[2] === 'null' ? null : always[2].replace(/^"(.*)"$/, '$1');
        const actual = typesOf(shape);
        const only = shape.kind === 'scalar' && shape.values !== null && shape.values.length === 1 && String(shape.values[0]) === String(value);
        if (!only) problems.push(`${at}: \`${name}\` is documented as always ${JSON.stringify(value)}, the document allows ${actual.values === null ? actual.types.join(' or ') : JSON.stringify(actual.values)}`);
      }
      if (/\bnever null\b/i.test(rowText) && shape.kind === 'scalar' && shape.types.includes('null')) problems.push(`${at}: \`${name}\` is documented as never null, the document allows null`);
    }
  }
  if (!table.partial) {
    const reached = [...written].map((path) => path.slice(0, path.lastIndexOf('.')));
    for (const prefix of ['', ...new Set(reached)]) {
      const shape = prefix === '' ? root : shapeAt(root, prefix);
      for (const object of shape === undefined ? [] : objectsOf(shape)) {
        for (const field of Object.keys(object.props)) {
          const path = prefix === '' ? field : `${prefix}.${field}`;
          if (field === 'request_id' && prefix === '') continue;
          if (!documented.has(path) && ![...documented].some((d) => d.startsWith(`${path}.`) || d.startsWith(`${path}[].`))) problems.push(`${at}: \`${path}\` is in the document, not in the table`);
        }
      }
    }
  }
  return [...new Set(problems)];
}

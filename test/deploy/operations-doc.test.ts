import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { CHART } from './support/helm.js';

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
}

/** Every leaf of values.yaml with its default, as the schema describes the tree. */
function leaves(
  values: Record<string, unknown>,
  schema: SchemaNode,
  prefix = '',
): [string, unknown][] {
  return Object.entries(values).flatMap(([key, value]) => {
    const node = schema.properties?.[key] ?? {};
    return node.properties
      ? leaves(value as Record<string, unknown>, node, `${prefix}${key}.`)
      : [[`${prefix}${key}`, value] as [string, unknown]];
  });
}

test('docs/operations.md has a row for every chart value, with the default values.yaml has', () => {
  const doc = readFileSync('docs/operations.md', 'utf8');
  const values = parse(readFileSync(`${CHART}/values.yaml`, 'utf8')) as Record<string, unknown>;
  const schema = JSON.parse(readFileSync(`${CHART}/values.schema.json`, 'utf8')) as SchemaNode;
  const rows = new Map(
    [...doc.matchAll(/^\| `([\w.]+)` +\| (.+?) +\|/gm)].map((m) => [m[1]!, m[2]!] as const),
  );
  const problems: string[] = [];
  for (const [path, value] of leaves(values, schema)) {
    const row = rows.get(path);
    const isMap =
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      Object.keys(value).length > 0;
    const expected = isMap ? 'see values.yaml' : `\`${JSON.stringify(value).replace(/,/g, ', ')}\``;
    if (row === undefined) problems.push(`${path}: no row`);
    else if (row !== expected)
      problems.push(`${path}: default ${row}, values.yaml has ${expected}`);
  }
  assert.deepEqual(problems, []);
});

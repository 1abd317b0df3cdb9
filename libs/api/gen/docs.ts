import type { JSONSchemaProps } from '../src/json-schema.js';

interface Row {
  path: string;
  type: string;
  required: boolean;
  defaultValue: string;
  limits: string;
  description: string;
}

function limitsOf(s: JSONSchemaProps): string {
  const parts: string[] = [];
  if (s.enum) parts.push(`one of ${s.enum.map((v) => `\`${String(v)}\``).join(', ')}`);
  if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined) parts.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) parts.push(`length ≤ ${s.maxLength}`);
  if (s.maxItems !== undefined) parts.push(`at most ${s.maxItems} items`);
  if (s.format) parts.push(`format ${s.format}`);
  if (s.pattern) parts.push(`pattern \`${s.pattern.replace(/\|/g, '\\|')}\``);
  for (const v of s['x-kubernetes-validations'] ?? []) parts.push(`rule: ${v.message}`);
  return parts.join('; ');
}

function rows(schema: JSONSchemaProps, prefix: string, required: boolean, out: Row[]): void {
  const type =
    schema.type === 'array'
      ? `[]${schema.items?.title ?? schema.items?.type}`
      : (schema.title ?? schema.type ?? '');
  out.push({
    path: prefix,
    type,
    required,
    defaultValue: schema.default === undefined ? '' : `\`${JSON.stringify(schema.default)}\``,
    limits: limitsOf(schema),
    description: (schema.description ?? '').replace(/\|/g, '\\|'),
  });
  const children = schema.type === 'array' ? schema.items : schema;
  const req = new Set(children?.required ?? []);
  for (const [name, child] of Object.entries(children?.properties ?? {})) {
    rows(child, `${prefix}${schema.type === 'array' ? '[]' : ''}.${name}`, req.has(name), out);
  }
}

/** Renders the field reference table of docs/api.md. */
export function renderApiDoc(
  sections: { title: string; root: string; schema: JSONSchemaProps }[],
  header: string,
): string {
  const parts = [header];
  for (const section of sections) {
    const table: Row[] = [];
    rows(section.schema, section.root, true, table);
    parts.push(`## ${section.title}\n`);
    parts.push('| Field | Type | Required | Default | Limits | Description |');
    parts.push('| --- | --- | --- | --- | --- | --- |');
    for (const r of table.slice(1)) {
      parts.push(
        `| \`${r.path}\` | ${r.type} | ${r.required ? 'yes' : ''} | ${r.defaultValue} | ${r.limits} | ${r.description} |`,
      );
    }
    parts.push('');
  }
  return parts.join('\n');
}

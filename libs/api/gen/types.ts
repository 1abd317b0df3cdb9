import type { JSONSchemaProps } from '../src/json-schema.js';

/**
 * Renders TypeScript declarations from the schema. Objects with a `title` become named interfaces;
 * others are written inline. Only the structural subset the schema uses is understood, and anything
 * else fails loudly rather than producing a wrong type.
 */
export function renderTypes(
  root: JSONSchemaProps,
  header: string,
  rootOverrides: Record<string, string> = {},
): string {
  const named = new Map<string, string>();

  function typeOf(schema: JSONSchemaProps, indent: string): string {
    if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'array':
        if (!schema.items) throw new Error('array schema without items');
        return `${typeOf(schema.items, indent)}[]`;
      case 'object':
        if (!schema.properties) return 'Record<string, unknown>';
        if (schema.title) {
          declare(schema);
          return schema.title;
        }
        return objectBody(schema, indent);
      default:
        throw new Error(`unsupported schema type ${String(schema.type)}`);
    }
  }

  function objectBody(schema: JSONSchemaProps, indent: string): string {
    const overrides = schema === root ? rootOverrides : {};
    const required = new Set([...(schema.required ?? []), ...Object.keys(overrides)]);
    const inner = `${indent}  `;
    const lines = Object.entries(schema.properties ?? {}).map(([name, child]) => {
      const doc = child.description
        ? `${inner}/** ${child.description.replace(/\*\//g, '*\\/')} */\n`
        : '';
      // A defaulted field is always present once the API server has admitted the object.
      const optional = required.has(name) || child.default !== undefined ? '' : '?';
      return `${doc}${inner}${name}${optional}: ${overrides[name] ?? typeOf(child, inner)};`;
    });
    return `{\n${lines.join('\n')}\n${indent}}`;
  }

  function declare(schema: JSONSchemaProps): void {
    const name = schema.title as string;
    if (named.has(name)) return;
    named.set(name, '');
    const doc = schema.description ? `/** ${schema.description} */\n` : '';
    named.set(name, `${doc}export interface ${name} ${objectBody(schema, '')}\n`);
  }

  typeOf(root, '');
  return `${header}\n${[...named.values()].reverse().join('\n')}`;
}

import type { JSONSchemaProps } from './json-schema.js';
import {
  CATEGORIES,
  CRD_NAME,
  GROUP,
  KIND,
  LIST_KIND,
  PLURAL,
  SHORT_NAMES,
  SINGULAR,
  VERSION,
} from './names.js';
import { backupJobSchema, printerColumns } from './schema.js';

/** `title` names TypeScript types; the API server has no use for it, so the CRD leaves it out. */
function withoutTitles(schema: JSONSchemaProps): JSONSchemaProps {
  const { title: _title, properties, items, ...rest } = schema;
  const out: JSONSchemaProps = { ...rest };
  if (properties) {
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, child]) => [name, withoutTitles(child)]),
    );
  }
  if (items) out.items = withoutTitles(items);
  return out;
}

/** The BackupJob CustomResourceDefinition (apiextensions.k8s.io/v1) as a plain object. */
export function backupJobCrd(schema: JSONSchemaProps = backupJobSchema) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: CRD_NAME,
      labels: { 'app.kubernetes.io/name': 'backupjob-operator' },
    },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: KIND,
        listKind: LIST_KIND,
        plural: PLURAL,
        singular: SINGULAR,
        shortNames: [...SHORT_NAMES],
        categories: [...CATEGORIES],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: printerColumns.map((c) => ({ ...c })),
          schema: { openAPIV3Schema: withoutTitles(schema) },
        },
      ],
    },
  };
}

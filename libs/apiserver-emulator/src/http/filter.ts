import { badRequest } from '../errors.js';
import type { ResourceType } from '../resource-type.js';
import { parseFieldSelector, parseLabelSelector } from '../selectors.js';
import type { KubeObject } from '../types.js';

export type ObjectFilter = (obj: KubeObject) => boolean;

/** labelSelector + fieldSelector of a list/watch request compiled into one predicate. */
export function compileFilter(rt: ResourceType, query: URLSearchParams): ObjectFilter | undefined {
  const labels = parseLabelSelector(query.get('labelSelector'));
  const fields = parseFieldSelector(query.get('fieldSelector')).map((req) => {
    const getter =
      req.field === 'metadata.name'
        ? (o: KubeObject) => o.metadata.name
        : req.field === 'metadata.namespace'
          ? (o: KubeObject) => o.metadata.namespace ?? ''
          : rt.fieldLabels[req.field];
    if (!getter) throw badRequest(`field label not supported: ${req.field}`);
    return (o: KubeObject) => ((getter(o) ?? '') === req.value) === (req.op === 'eq');
  });
  if (!labels && fields.length === 0) return undefined;
  return (o) => (!labels || labels(o.metadata.labels)) && fields.every((f) => f(o));
}

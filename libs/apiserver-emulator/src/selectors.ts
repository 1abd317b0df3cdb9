import { badRequest } from './errors.js';

/**
 * Label selectors (docs/concepts/overview/working-with-objects/labels/#label-selectors) and
 * field selectors (…/field-selectors/), compiled once per request into predicates.
 */
type Requirement =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'notexists'; key: string };

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_./]*[a-z0-9A-Z])?)$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, selector: string): string {
  if (!KEY.test(key))
    throw badRequest(
      `unable to parse requirement: invalid label key "${key}" in selector "${selector}"`,
    );
  return key;
}

function checkValue(value: string, selector: string): string {
  if (!VALUE.test(value))
    throw badRequest(
      `unable to parse requirement: invalid label value: "${value}" in selector "${selector}"`,
    );
  return value;
}

function parseRequirement(part: string, selector: string): Requirement {
  const setMatch = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
  if (setMatch) {
    const values = setMatch[3]!.split(',').map((v) => checkValue(v.trim(), selector));
    return { op: setMatch[2] as 'in' | 'notin', key: checkKey(setMatch[1]!, selector), values };
  }
  const eqMatch = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part);
  if (eqMatch) {
    const op = eqMatch[2] === '!=' ? 'neq' : 'eq';
    return { op, key: checkKey(eqMatch[1]!, selector), value: checkValue(eqMatch[3]!, selector) };
  }
  if (part.startsWith('!'))
    return { op: 'notexists', key: checkKey(part.slice(1).trim(), selector) };
  if (KEY.test(part)) return { op: 'exists', key: part };
  throw badRequest(
    `unable to parse requirement: found '${part}', expected: in, notin, =, ==, !=, gt, lt`,
  );
}

function matches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.op) {
    case 'eq':
      return has && v === r.value;
    case 'neq':
      return !has || v !== r.value;
    case 'in':
      return has && r.values.includes(v!);
    case 'notin':
      return !has || !r.values.includes(v!);
    case 'exists':
      return has;
    case 'notexists':
      return !has;
  }
}

export function parseLabelSelector(selector: string | null | undefined): LabelMatcher | undefined {
  if (!selector) return undefined;
  const reqs = splitTopLevel(selector).map((p) => parseRequirement(p, selector));
  return (labels) => reqs.every((r) => matches(r, labels ?? {}));
}

/** metav1.LabelSelector (matchLabels + matchExpressions) as a matcher, for RBAC and tests. */
export function labelSelectorFromObject(sel: {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}): LabelMatcher {
  const reqs: Requirement[] = Object.entries(sel.matchLabels ?? {}).map(([key, value]) => ({
    op: 'eq',
    key,
    value,
  }));
  for (const e of sel.matchExpressions ?? []) {
    const op = e.operator.toLowerCase();
    if (op === 'in' || op === 'notin') reqs.push({ op, key: e.key, values: e.values ?? [] });
    else if (op === 'exists') reqs.push({ op: 'exists', key: e.key });
    else reqs.push({ op: 'notexists', key: e.key });
  }
  return (labels) => reqs.every((r) => matches(r, labels ?? {}));
}

export interface FieldRequirement {
  field: string;
  op: 'eq' | 'neq';
  value: string;
}

export function parseFieldSelector(selector: string | null | undefined): FieldRequirement[] {
  if (!selector) return [];
  return splitTopLevel(selector).map((part) => {
    const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    return { field: m[1]!.trim(), op: m[2] === '!=' ? 'neq' : 'eq', value: m[3]!.trim() };
  });
}

import { badRequest, invalid, type FieldError } from '../errors.js';

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * A boolean query parameter as kube-apiserver converts it (Go's strconv.ParseBool): `True`, `1`,
 * `t` … are true; an unparsable value is a 400 naming the parameter.
 */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === '') return false;
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw badRequest(
    `${name}: Invalid value: "${value}": strconv.ParseBool: parsing "${value}": invalid syntax`,
  );
}

/**
 * meta/v1 ValidateListOptions for resourceVersion / resourceVersionMatch / sendInitialEvents:
 * a 422 Invalid on ListOptions, as kube-apiserver answers.
 */
export function validateListOptions(query: URLSearchParams, watch: boolean): void {
  const match = query.get('resourceVersionMatch') ?? '';
  const rv = query.get('resourceVersion') ?? '';
  const errors: FieldError[] = [];
  const forbidden = (detail: string) =>
    errors.push({ type: 'Forbidden', field: 'resourceVersionMatch', detail });
  if (watch) {
    if (query.has('sendInitialEvents')) {
      if (match !== 'NotOlderThan')
        forbidden('sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    } else if (match) forbidden('resourceVersionMatch is forbidden for watch');
  } else if (match) {
    if (!rv) forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided');
    else if (query.get('continue'))
      forbidden('resourceVersionMatch is forbidden when continue is provided');
    else if (match === 'Exact' && rv === '0')
      forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    else if (match !== 'Exact' && match !== 'NotOlderThan')
      errors.push({
        type: 'NotSupported',
        field: 'resourceVersionMatch',
        value: match,
        detail: 'supported values: "Exact", "NotOlderThan"',
      });
  }
  if (errors.length) throw invalid('ListOptions', 'meta.k8s.io', '', errors);
}

import { badRequest } from '../errors.js';

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

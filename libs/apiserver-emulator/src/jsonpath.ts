import { isPlainObject } from './util.js';

/**
 * The JSONPath subset CRD printer columns use: `.a.b`, `.a[0]`, `.a[*].b` and filters such as
 * `.status.conditions[?(@.type=="Ready")].status`. Returns every match.
 */
export function evalJsonPath(obj: unknown, path: string): unknown[] {
  let current: unknown[] = [obj];
  const expr = path
    .trim()
    .replace(/^\{|\}$/g, '')
    .replace(/^\$/, '');
  const tokens = expr.match(/\.[^.[]+|\[[^\]]*\]/g) ?? [];
  for (const token of tokens) {
    const next: unknown[] = [];
    for (const cur of current) step(cur, token, next);
    current = next;
  }
  return current;
}

function step(cur: unknown, token: string, out: unknown[]): void {
  if (token.startsWith('.')) {
    if (isPlainObject(cur) && cur[token.slice(1)] !== undefined) out.push(cur[token.slice(1)]);
    return;
  }
  const inner = token.slice(1, -1);
  if (!Array.isArray(cur)) return;
  if (inner === '*') out.push(...cur);
  else if (/^-?\d+$/.test(inner)) {
    const i = Number(inner);
    const v = cur[i < 0 ? cur.length + i : i];
    if (v !== undefined) out.push(v);
  } else if (inner.startsWith('?(')) {
    const m = /^\?\(@\.([\w.]+)\s*(==|!=)\s*["']?([^"')]*)["']?\)$/.exec(inner);
    if (!m) return;
    const [, field, op, want] = m;
    for (const item of cur) {
      const got = evalJsonPath(item, `.${field}`)[0];
      if ((String(got) === want) === (op === '==')) out.push(item);
    }
  }
}

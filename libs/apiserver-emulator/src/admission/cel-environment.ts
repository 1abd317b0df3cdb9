import { Environment } from '@marcbachmann/cel-js';
import { withAuthorizerLibrary } from './authorizer-library.js';

/**
 * The CEL environments of ValidatingAdmissionPolicy, as kube-apiserver declares them: `object`,
 * `oldObject`, `request`, `params`, `namespaceObject` and `variables` everywhere, and the
 * `authorizer` library in variables, matchConditions and validation expressions but not in
 * messageExpression. Names outside these fail to compile.
 */
function base(): Environment {
  return new Environment()
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'dyn')
    .registerVariable('params', 'dyn')
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('variables', 'dyn');
}

export const expressionEnvironment = withAuthorizerLibrary(base());
export const messageEnvironment = base();

/**
 * How a JSON value reaches CEL: kube-apiserver decodes whole JSON numbers as int64, so
 * `object.spec.replicas == 3` compares ints; everything else is as JSON reads it.
 */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  }
  return value;
}

/** A CEL error's message without the source excerpt cel-js appends after a blank line. */
export function celMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n\n')[0] ?? text;
}

/**
 * Compiles (parses and type-checks) an expression; returns why it does not compile, if it does
 * not. `output` is the type it must have, unless the checker can only tell it is dyn.
 */
export function compileError(
  env: Environment,
  expression: string,
  output?: 'bool' | 'string',
): string | undefined {
  let checked: ReturnType<Environment['check']>;
  try {
    checked = env.check(expression);
  } catch (err) {
    return `compilation failed: ${celMessage(err)}`;
  }
  if (!checked.valid) return `compilation failed: ${celMessage(checked.error)}`;
  if (output && checked.type !== output && checked.type !== 'dyn') {
    return `must evaluate to ${output}`;
  }
  return undefined;
}

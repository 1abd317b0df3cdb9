import type { FieldError } from '../errors.js';
import type { KubeObject } from '../types.js';
import { isPlainObject } from '../util.js';
import { compileError, expressionEnvironment, messageEnvironment } from './cel-environment.js';

/** admissionregistration.k8s.io/v1 as far as the emulator reads it. */

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface NamedRule {
  apiGroups?: string[];
  apiVersions?: string[];
  operations?: string[];
  resources?: string[];
  resourceNames?: string[];
  scope?: '*' | 'Cluster' | 'Namespaced';
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRule[];
  excludeResourceRules?: NamedRule[];
  matchPolicy?: 'Exact' | 'Equivalent';
}

export interface Validation {
  expression: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
}

export interface Variable {
  name: string;
  expression: string;
}

export interface MatchCondition {
  name: string;
  expression: string;
}

export interface PolicySpec {
  failurePolicy?: 'Fail' | 'Ignore';
  matchConstraints?: MatchResources;
  matchConditions?: MatchCondition[];
  variables?: Variable[];
  validations?: Validation[];
  auditAnnotations?: { key: string; valueExpression: string }[];
  paramKind?: { apiVersion?: string; kind?: string };
}

export type ValidationAction = 'Deny' | 'Warn' | 'Audit';

export interface BindingSpec {
  policyName?: string;
  validationActions?: ValidationAction[];
  matchResources?: MatchResources;
  paramRef?: unknown;
}

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const ACTIONS = ['Audit', 'Deny', 'Warn'];
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** What the API server's defaulting adds (SetDefaults_ValidatingAdmissionPolicySpec and friends). */
function defaultMatchResources(match: MatchResources): void {
  match.matchPolicy ??= 'Equivalent';
  match.namespaceSelector ??= {};
  match.objectSelector ??= {};
  for (const rule of [...(match.resourceRules ?? []), ...(match.excludeResourceRules ?? [])]) {
    rule.scope ??= '*';
  }
}

export function defaultPolicy(obj: KubeObject): void {
  const spec = obj.spec as PolicySpec | undefined;
  if (!isPlainObject(spec)) return;
  spec.failurePolicy ??= 'Fail';
  if (isPlainObject(spec.matchConstraints)) defaultMatchResources(spec.matchConstraints);
}

export function defaultBinding(obj: KubeObject): void {
  const spec = obj.spec as BindingSpec | undefined;
  if (isPlainObject(spec) && isPlainObject(spec.matchResources)) {
    defaultMatchResources(spec.matchResources);
  }
}

type Errors = FieldError[];

function required(errors: Errors, field: string, detail = ''): void {
  errors.push({ type: 'Required', field, detail });
}

function notSupported(errors: Errors, field: string, value: unknown, supported: string[]): void {
  const list = supported.map((s) => JSON.stringify(s)).join(', ');
  errors.push({ type: 'NotSupported', field, value, detail: `supported values: ${list}` });
}

function expression(
  errors: Errors,
  field: string,
  text: unknown,
  output?: 'bool' | 'string',
  env = expressionEnvironment,
): void {
  if (typeof text !== 'string' || text.trim() === '') return required(errors, field);
  const problem = compileError(env, text, output);
  if (problem) errors.push({ type: 'Invalid', field, value: text, detail: problem });
}

function validateRules(errors: Errors, field: string, rules: NamedRule[] | undefined): void {
  (rules ?? []).forEach((rule, i) => {
    const at = `${field}[${i}]`;
    for (const list of ['apiGroups', 'apiVersions', 'operations', 'resources'] as const) {
      if (!Array.isArray(rule[list]) || rule[list].length === 0) required(errors, `${at}.${list}`);
    }
    (rule.operations ?? []).forEach((op, j) => {
      if (!OPERATIONS.includes(op)) notSupported(errors, `${at}.operations[${j}]`, op, OPERATIONS);
    });
    if (rule.scope !== undefined && !SCOPES.includes(rule.scope)) {
      notSupported(errors, `${at}.scope`, rule.scope, SCOPES);
    }
    const seen = new Set<string>();
    (rule.resourceNames ?? []).forEach((name, j) => {
      if (seen.has(name)) {
        errors.push({
          type: 'Duplicate',
          field: `${at}.resourceNames[${j}]`,
          value: name,
          detail: '',
        });
      }
      seen.add(name);
    });
  });
}

function validateMatchResources(errors: Errors, field: string, match: MatchResources): void {
  if (match.matchPolicy !== 'Exact' && match.matchPolicy !== 'Equivalent') {
    notSupported(errors, `${field}.matchPolicy`, match.matchPolicy, ['Equivalent', 'Exact']);
  }
  validateRules(errors, `${field}.resourceRules`, match.resourceRules);
  validateRules(errors, `${field}.excludeResourceRules`, match.excludeResourceRules);
}

function hasLineBreak(text: string): boolean {
  return /[\n\r]/.test(text);
}

function validateValidation(errors: Errors, at: string, v: Validation): void {
  expression(errors, `${at}.expression`, v.expression, 'bool');
  if (v.messageExpression !== undefined) {
    if (v.messageExpression.trim() === '') {
      errors.push({
        type: 'Invalid',
        field: `${at}.messageExpression`,
        value: v.messageExpression,
        detail: 'must be non-empty if specified',
      });
    } else {
      // messageExpression has no authorizer: a check there does not compile.
      expression(
        errors,
        `${at}.messageExpression`,
        v.messageExpression,
        'string',
        messageEnvironment,
      );
    }
  }
  if (v.message !== undefined) {
    const detail =
      v.message.trim() === ''
        ? 'message must be non-empty if specified'
        : hasLineBreak(v.message.trim())
          ? 'message must not contain line breaks'
          : undefined;
    if (detail) errors.push({ type: 'Invalid', field: `${at}.message`, value: v.message, detail });
  }
  if (v.reason !== undefined && !REASONS.includes(v.reason)) {
    notSupported(errors, `${at}.reason`, v.reason, REASONS);
  }
}

/** ValidateValidatingAdmissionPolicy: the checks a create or update of a policy must pass. */
export function validatePolicy(obj: KubeObject): FieldError[] {
  const errors: Errors = [];
  const spec = (obj.spec ?? {}) as PolicySpec;
  if (spec.failurePolicy !== 'Fail' && spec.failurePolicy !== 'Ignore') {
    notSupported(errors, 'spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']);
  }
  const match = spec.matchConstraints;
  if (typeof match !== 'object' || match === null || Array.isArray(match)) {
    required(errors, 'spec.matchConstraints');
  } else {
    validateMatchResources(errors, 'spec.matchConstraints', match);
    // At least one resource rule gives the expressions their types.
    if (!match.resourceRules?.length) {
      required(errors, 'spec.matchConstraints.resourceRules');
    }
  }
  const conditionNames = new Set<string>();
  (spec.matchConditions ?? []).forEach((c, i) => {
    const at = `spec.matchConditions[${i}]`;
    expression(errors, `${at}.expression`, c.expression, 'bool');
    if (!c.name) required(errors, `${at}.name`);
    else if (!QUALIFIED_NAME.test(c.name)) {
      errors.push({
        type: 'Invalid',
        field: `${at}.name`,
        value: c.name,
        detail: "name part must consist of alphanumeric characters, '-', '_' or '.'",
      });
    } else if (conditionNames.has(c.name)) {
      errors.push({ type: 'Duplicate', field: `${at}.name`, value: c.name, detail: '' });
    }
    conditionNames.add(c.name);
  });
  (spec.variables ?? []).forEach((v, i) => {
    const at = `spec.variables[${i}]`;
    if (!v.name || v.name.trim() === '') required(errors, `${at}.name`, 'name is not specified');
    else if (!CEL_IDENTIFIER.test(v.name)) {
      errors.push({
        type: 'Invalid',
        field: `${at}.name`,
        value: v.name,
        detail: 'name is not a valid CEL identifier',
      });
    }
    expression(errors, `${at}.expression`, v.expression);
  });
  if (!spec.validations?.length && !spec.auditAnnotations?.length) {
    const detail = 'validations or auditAnnotations must contain at least one item';
    required(errors, 'spec.validations', detail);
    required(errors, 'spec.auditAnnotations', detail);
  }
  (spec.validations ?? []).forEach((v, i) =>
    validateValidation(errors, `spec.validations[${i}]`, v),
  );
  return errors;
}

/** ValidateValidatingAdmissionPolicyBinding. */
export function validateBinding(obj: KubeObject): FieldError[] {
  const errors: Errors = [];
  const spec = (obj.spec ?? {}) as BindingSpec;
  if (!spec.policyName) required(errors, 'spec.policyName');
  const actions = spec.validationActions ?? [];
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    const at = `spec.validationActions[${i}]`;
    if (!ACTIONS.includes(action)) notSupported(errors, at, action, ACTIONS);
    if (seen.has(action)) errors.push({ type: 'Duplicate', field: at, value: action, detail: '' });
    seen.add(action);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errors.push({
      type: 'Invalid',
      field: 'spec.validationActions',
      value: actions,
      detail:
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    });
  }
  if (seen.size === 0) {
    required(errors, 'spec.validationActions', 'at least one validation action is required');
  }
  if (isPlainObject(spec.matchResources)) {
    validateMatchResources(errors, 'spec.matchResources', spec.matchResources);
  }
  return errors;
}

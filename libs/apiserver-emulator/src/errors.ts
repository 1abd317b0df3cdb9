/**
 * Status bodies shaped like k8s.io/apimachinery/pkg/api/errors, because kubectl prints
 * `Error from server (<reason>): <message>` and clients branch on `reason` and `code`.
 */
export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers: Record<string, string | string[]> = {},
  ) {
    super(message);
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** `backupjobs.ops.example.com` or `configmaps` — the qualified resource name in messages. */
export function qualifiedResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

function resourceDetails(resource: string, group: string, name: string): StatusDetails {
  const details: StatusDetails = { name, kind: resource };
  if (group) details.group = group;
  return details;
}

export function notFound(resource: string, group: string, name: string): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${qualifiedResource(resource, group)} "${name}" not found`,
    resourceDetails(resource, group, name),
  );
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(resource: string, group: string, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualifiedResource(resource, group)} "${name}" already exists`,
    resourceDetails(resource, group, name),
  );
}

export function conflict(resource: string, group: string, name: string, why?: string): ApiError {
  const reason =
    why ??
    'the object has been modified; please apply your changes to the latest version and try again';
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(resource, group)} "${name}": ${reason}`,
    resourceDetails(resource, group, name),
  );
}

export interface FieldError {
  type: 'Invalid' | 'Required' | 'Forbidden' | 'NotSupported' | 'Duplicate' | 'TooLong' | 'TooMany';
  field: string;
  detail: string;
  value?: unknown;
}

const causeReason: Record<FieldError['type'], string> = {
  Invalid: 'FieldValueInvalid',
  Required: 'FieldValueRequired',
  Forbidden: 'FieldValueForbidden',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
};

const typeText: Record<FieldError['type'], string> = {
  Invalid: 'Invalid value',
  Required: 'Required value',
  Forbidden: 'Forbidden',
  NotSupported: 'Unsupported value',
  Duplicate: 'Duplicate value',
  TooLong: 'Too long',
  TooMany: 'Too many',
};

/** field.Error.Error(): `spec.x: Invalid value: "v": detail`. */
function fieldErrorText(e: FieldError): string {
  const shown =
    e.value !== undefined &&
    (e.type === 'Invalid' || e.type === 'NotSupported' || e.type === 'Duplicate')
      ? `${JSON.stringify(e.value)}: `
      : '';
  return `${e.field}: ${typeText[e.type]}: ${shown}${e.detail}`;
}

/** 422 Invalid; details.kind is the Kind and the message uses Kind.group. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const qualified = group ? `${kind}.${group}` : kind;
  const texts = errors.map(fieldErrorText);
  const list = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  const details: StatusDetails = {
    name,
    kind,
    causes: errors.map((e) => ({
      reason: causeReason[e.type],
      message: fieldErrorText(e).slice(e.field.length + 2),
      field: e.field,
    })),
  };
  if (group) details.group = group;
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${list}`, details);
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

export function unsupportedMediaType(message: string): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', message);
}

export function forbidden(
  resource: string,
  group: string,
  name: string,
  message: string,
): ApiError {
  const subject = name
    ? `${qualifiedResource(resource, group)} "${name}"`
    : qualifiedResource(resource, group);
  return new ApiError(
    403,
    'Forbidden',
    `${subject} is forbidden: ${message}`,
    resourceDetails(resource, group, name),
  );
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`);
}

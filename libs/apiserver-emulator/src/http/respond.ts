import { stringify as stringifyYaml } from 'yaml';
import type { ServerResponse } from 'node:http';
import { ApiError, internalError } from '../errors.js';

export function sendJson(
  res: ServerResponse,
  code: number,
  body: string | object,
  headers: Record<string, string | string[]> = {},
  contentType = 'application/json',
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): number {
  const apiErr =
    err instanceof ApiError ? err : internalError(err instanceof Error ? err.message : String(err));
  if (res.headersSent) {
    res.destroy();
    return apiErr.code;
  }
  sendJson(res, apiErr.code, apiErr.toStatus(), apiErr.headers);
  return apiErr.code;
}

/** `Warning: 299 - "<text>"` headers that kubectl prints as `Warning: <text>`. */
export function warningHeaders(warnings: string[]): Record<string, string[]> {
  if (warnings.length === 0) return {};
  return { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) };
}

/** True when the first media type of Accept this server can produce is YAML. */
function prefersYaml(accept: string | undefined): boolean {
  for (const entry of (accept ?? '').split(',')) {
    const type = entry.split(';')[0]!.trim().toLowerCase();
    if (type === 'application/yaml') return true;
    if (['application/json', 'application/*', '*/*'].includes(type)) return false;
  }
  return false;
}

/** An object or list in the format Accept asks for: JSON, or YAML for `application/yaml`. */
export function sendNegotiated(
  res: ServerResponse,
  accept: string | undefined,
  code: number,
  body: string | object,
  headers: Record<string, string | string[]> = {},
): void {
  if (!prefersYaml(accept)) return sendJson(res, code, body, headers);
  const value: unknown = typeof body === 'string' ? JSON.parse(body) : body;
  sendJson(res, code, stringifyYaml(value), headers, 'application/yaml');
}

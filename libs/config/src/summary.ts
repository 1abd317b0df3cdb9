import { formatDuration } from './duration.js';

/**
 * The configuration as one flat object for the "started" log line: durations in Go notation,
 * credentials left out (the Redis password never reaches a log).
 */
export function configSummary(config: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  flatten(config, '', out);
  if ('kubeconfig' in config && config.kubeconfig === undefined) out.kubeconfig = '(in-cluster)';
  return out;
}

const SECRET = /password|token|secret/i;

function flatten(value: unknown, path: string, out: Record<string, unknown>): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (SECRET.test(key)) {
        if (child !== undefined) out[join(path, key)] = '(set)';
        continue;
      }
      flatten(child, join(path, key), out);
    }
    return;
  }
  if (Array.isArray(value)) out[path] = value.map(item).join(',');
  else if (typeof value === 'number' && path.endsWith('Ms'))
    out[path.slice(0, -2)] = formatDuration(value);
  else if (value !== undefined) out[path] = value;
}

/** A list item as text: Redis endpoints read `host:port`. */
function item(value: unknown): string {
  if (value !== null && typeof value === 'object' && 'host' in value && 'port' in value) {
    return `${String(value.host)}:${String(value.port)}`;
  }
  return String(value);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

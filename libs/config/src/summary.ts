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
  if (Array.isArray(value)) out[path] = value.join(',');
  else if (typeof value === 'number' && path.endsWith('Ms'))
    out[path.slice(0, -2)] = formatDuration(value);
  else if (value !== undefined) out[path] = value;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

// Node decodes a source map whole, on the main thread, the first time a process formats a stack
// trace: for a bundle's map, every mapping of every package inside. That took 0.2-0.5 s of CPU,
// usually at the first connection error of a Redis failover, when a leader must keep renewing its
// Lease; a container with a CPU limit takes ten times as long. The project's own sources are a
// few percent of those mappings and are what a stack trace needs to be read; a frame inside a
// package keeps its function name and shows its position in the bundle.

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/** Keeps the mappings whose source passes `isOwn`; positions, sources and names stay as they were. */
export function keepOwnSources(map, isOwn = (source) => !/(^|\/)node_modules\//.test(source)) {
  const own = map.sources.map((source) => isOwn(source));
  const lines = decodeMappings(map.mappings).map((segments) =>
    segments.filter((s) => s.length > 1 && own[s[1]]),
  );
  return { ...map, mappings: encodeMappings(lines) };
}

/**
 * Each generated line's segments, with every field absolute (the format stores deltas).
 * @public the bundle tests read the shipped maps with it
 */
export function decodeMappings(mappings) {
  const state = [0, 0, 0, 0, 0];
  return mappings.split(';').map((line) => {
    state[0] = 0;
    if (line === '') return [];
    return line.split(',').map((field) => {
      const values = decodeVlq(field);
      return values.map((delta, i) => (state[i] += delta));
    });
  });
}

function encodeMappings(lines) {
  const previous = [0, 0, 0, 0, 0];
  return lines
    .map((segments) => {
      previous[0] = 0;
      return segments
        .map((segment) =>
          segment
            .map((value, i) => {
              const delta = value - previous[i];
              previous[i] = value;
              return encodeVlq(delta);
            })
            .join(''),
        )
        .join(',');
    })
    .join(';');
}

function decodeVlq(field) {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const char of field) {
    const digit = DIGIT.get(char);
    if (digit === undefined) throw new Error(`not a base64 digit in a source map: ${char}`);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2);
    value = 0;
    shift = 0;
  }
  return values;
}

function encodeVlq(delta) {
  let value = delta < 0 ? -delta * 2 + 1 : delta * 2;
  let out = '';
  do {
    const digit = value % 32;
    value = Math.floor(value / 32);
    out += BASE64[value > 0 ? digit | 32 : digit];
  } while (value > 0);
  return out;
}

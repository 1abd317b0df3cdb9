import { badRequest } from './errors.js';
import { isPlainObject } from './util.js';

const BASE64_CHAR = /[A-Za-z0-9+/]/;

/**
 * Where Go's base64.StdEncoding (the JSON form of []byte) stops reading `text`, or -1 when it is
 * valid: only the standard alphabet, `=` padding at the end, and a length that is a multiple of 4.
 */
function illegalBase64At(text: string): number {
  const body = text.replace(/[\r\n]/g, '');
  const pad = /=*$/.exec(body)![0].length;
  for (let i = 0; i < body.length - pad; i++) if (!BASE64_CHAR.test(body[i]!)) return i;
  if (pad > 2 || body.length % 4 !== 0) return Math.max(0, body.length - (body.length % 4 || 4));
  return -1;
}

/** Rejects a map of []byte values (Secret data, ConfigMap binaryData) that JSON decoding would reject. */
export function checkByteMap(kind: string, map: unknown): void {
  if (!isPlainObject(map)) return;
  for (const value of Object.values(map)) {
    const at = typeof value === 'string' ? illegalBase64At(value) : 0;
    if (at >= 0)
      throw badRequest(
        `${kind} in version "v1" cannot be handled as a ${kind}: illegal base64 data at input byte ${at}`,
      );
  }
}

/** Secret conversion: stringData is write-only; its entries replace those of data, base64-encoded. */
export function secretIntake(obj: Record<string, unknown>): void {
  checkByteMap('Secret', obj.data);
  if (obj.stringData === undefined) return;
  if (isPlainObject(obj.stringData)) {
    const data = (isPlainObject(obj.data) ? obj.data : {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(obj.stringData))
      data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { badRequest, unsupportedMediaType } from '../errors.js';
import { decodeProtobufObject } from '../protobuf.js';

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** Decodes a request body by Content-Type: JSON (all patch types), YAML (apply), protobuf (kubectl ≥1.32 typed commands). */
export function decodeBody(body: Buffer, contentType: string | undefined): unknown {
  if (body.length === 0) return undefined;
  const type = (contentType ?? 'application/json').split(';')[0]!.trim();
  if (type === PROTOBUF) return decodeProtobufObject(body);
  if (type === 'application/cbor' || type.endsWith('+cbor'))
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PROTOBUF}`,
    );
  const text = body.toString('utf8');
  try {
    if (type.endsWith('yaml')) return parseYaml(text);
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(
      `the server rejected our request due to an error in our request: ${(e as Error).message}`,
    );
  }
}

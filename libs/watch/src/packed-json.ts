import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Deflates texts of one kind against a preset dictionary: the first text it packs. The texts a
 * watcher caches this way are the operator's own output, alike but for a few names, so each packs
 * into tens of bytes (a CronJob's spec: 1.8 KB of text, about 60 bytes packed). The bytes are kept
 * as a one-byte string, not a Buffer: a small Buffer is a view that keeps its whole allocation
 * (zlib's output chunk or Node's 8 KB pool) alive for as long as the view lives.
 */
export class JsonPacker {
  private dictionary: Buffer | undefined;

  pack(value: unknown): string {
    const text = JSON.stringify(value);
    this.dictionary ??= Buffer.from(text);
    return deflateRawSync(text, { dictionary: this.dictionary }).toString('latin1');
  }

  unpack(packed: string): unknown {
    const text = inflateRawSync(Buffer.from(packed, 'latin1'), { dictionary: this.dictionary });
    return JSON.parse(text.toString());
  }
}

/**
 * A part of a cached object that the watcher only passes on, kept packed: JSON.stringify writes it
 * back as the value it was, so what is built from the cache serializes exactly as before, and
 * reading it as an object is a mistake this type makes visible.
 */
export class PackedJson {
  private readonly packed: string;

  constructor(
    value: unknown,
    private readonly packer: JsonPacker,
  ) {
    this.packed = packer.pack(value);
  }

  toJSON(): unknown {
    return this.packer.unpack(this.packed);
  }
}

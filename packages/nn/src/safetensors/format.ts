import { DType, TypedArray, ValueError } from '@surf/core';
import {
  ITEM_BYTES,
  SafeDType,
  StoreDType,
  decodeElements,
  encodeElements,
  isSafeDType,
  storedDType,
  surfDType,
} from './dtypes';
import { brief, checkName, isObject } from './untrusted';

/**
 * The safetensors byte format, with no tensors involved: an 8-byte little-endian u64 header
 * length N, N bytes of JSON header ({ name: { dtype, shape, data_offsets: [begin, end] },
 * optional "__metadata__": { string: string } }), then the tensors' little-endian bytes.
 * Offsets are relative to the end of the header and must tile the data area exactly (no gap,
 * no overlap, nothing left over), which is what the reference implementation checks too.
 */

// The reference implementation refuses headers over 100 MB; so do we, before parsing.
const MAX_HEADER = 100_000_000;

export interface RawTensor {
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Elements in row-major order. */
  readonly data: TypedArray;
  /** How a float32 tensor is stored (default float32). */
  readonly store?: StoreDType;
}

export interface DecodedFile {
  readonly tensors: Map<string, RawTensor>;
  /** A null-prototype object: its keys come from the file. */
  readonly metadata: Record<string, string> | undefined;
  /** Each tensor's stored dtype and shape, in file order (also when the data was not decoded). */
  readonly headers: Map<string, TensorHeader>;
}

export interface TensorHeader {
  readonly dtype: SafeDType;
  readonly shape: readonly number[];
}

/** Writes tensors (in the given order) and optional string metadata as one safetensors buffer. */
export function encodeSafetensors(
  tensors: Iterable<[string, RawTensor]>,
  metadata?: Record<string, string>,
): Uint8Array {
  // Null prototype: a tensor or metadata name is a key here and must stay data.
  const header: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (metadata !== undefined) {
    if (!isObject(metadata))
      throw new ValueError(
        `save: metadata must be an object of strings; got ${Array.isArray(metadata) ? 'an array' : typeof metadata}`,
      );
    for (const [k, v] of Object.entries(metadata)) {
      checkName('save', 'metadata key', k);
      if (typeof v !== 'string')
        throw new ValueError(
          `save: metadata value for '${k}' is ${typeof v}; expected a string (safetensors metadata is string to string)`,
        );
    }
    header.__metadata__ = { ...metadata };
  }
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const [name, t] of tensors) {
    if (name === '__metadata__')
      throw new ValueError(`save: '__metadata__' is reserved by the safetensors format and cannot name a tensor`);
    checkName('save', 'tensor name', name);
    if (name in header) throw new ValueError(`save: tensor name '${name}' appears twice`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length)
      throw new ValueError(
        `save: tensor '${name}' has ${t.data.length} values for shape [${t.shape.join(',')}] (${n} elements)`,
      );
    const dtype = storedDType(t.dtype, t.store ?? 'float32');
    const b = encodeElements(dtype, t.data);
    header[name] = { dtype, shape: t.shape.slice(), data_offsets: [offset, offset + b.length] };
    chunks.push(b);
    offset += b.length;
  }
  let json = JSON.stringify(header);
  // Pad with spaces so the data starts 8-aligned (what the reference writer does); the
  // length is in UTF-8 bytes, which differs from the string length for non-ASCII names.
  let jsonBytes = new TextEncoder().encode(json);
  const pad = (8 - (jsonBytes.length % 8)) % 8;
  if (pad) {
    json += ' '.repeat(pad);
    jsonBytes = new TextEncoder().encode(json);
  }
  const out = new Uint8Array(8 + jsonBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
  out.set(jsonBytes, 8);
  let pos = 8 + jsonBytes.length;
  for (const c of chunks) {
    out.set(c, pos);
    pos += c.length;
  }
  return out;
}

function fail(msg: string): never {
  throw new ValueError(`load: not a valid safetensors file: ${msg}`);
}

/** Parses and validates a safetensors buffer (the whole of it; the tensors' data only when withData); every inconsistency is a ValueError naming it. */
export function decodeSafetensors(bytes: Uint8Array, withData = true): DecodedFile {
  if (!(bytes instanceof Uint8Array))
    throw new ValueError(
      `load: got ${Object.prototype.toString.call(bytes)}; expected a Uint8Array of safetensors bytes`,
    );
  if (bytes.length < 8) fail(`${bytes.length} bytes is too short for the 8-byte header length`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n64 = dv.getBigUint64(0, true);
  if (n64 > BigInt(MAX_HEADER)) fail(`header length ${n64} exceeds the ${MAX_HEADER}-byte limit`);
  const n = Number(n64);
  if (n < 2) fail(`header length ${n} is too small for a JSON object`);
  if (8 + n > bytes.length) fail(`header length ${n} runs past the end of the ${bytes.length}-byte buffer`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    fail(`header is not UTF-8 JSON (${(e as Error).message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('header is not a JSON object');

  let metadata: Record<string, string> | undefined;
  const entries: { name: string; dtype: SafeDType; shape: number[]; begin: number; end: number }[] = [];
  // Object.keys of JSON.parse's result includes an own '__proto__' key; every name is checked
  // before it is used as a key anywhere.
  for (const name of Object.keys(header as object)) {
    const info = (header as Record<string, unknown>)[name];
    if (name === '__metadata__') {
      if (!isObject(info) || !Object.values(info).every((v) => typeof v === 'string'))
        fail('__metadata__ must map strings to strings');
      metadata = Object.create(null) as Record<string, string>;
      for (const k of Object.keys(info)) {
        checkName('load', 'metadata key', k);
        metadata[k] = info[k] as string;
      }
      continue;
    }
    checkName('load', 'tensor name', name);
    if (!isObject(info)) fail(`entry '${name}' is not an object`);
    const own = (k: string) => (Object.prototype.hasOwnProperty.call(info, k) ? info[k] : undefined);
    const dtype = own('dtype');
    const shape = own('shape');
    const offs = own('data_offsets');
    if (typeof dtype !== 'string') fail(`tensor '${name}' has no dtype`);
    if (!isSafeDType(dtype)) {
      throw new ValueError(
        `load: tensor '${name}' has dtype ${JSON.stringify(dtype.slice(0, 20))}, which Surf cannot read; expected one of ${Object.keys(ITEM_BYTES).join(', ')}`,
      );
    }
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
      fail(`tensor '${name}' has shape ${brief(shape)}; expected an array of non-negative integers`);
    if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((o) => Number.isSafeInteger(o) && o >= 0))
      fail(`tensor '${name}' has data_offsets ${brief(offs)}; expected [begin, end] non-negative integers`);
    const [begin, end] = offs as number[];
    if (end < begin) fail(`tensor '${name}' has data_offsets [${begin}, ${end}] with end before begin`);
    const want = (shape as number[]).reduce((a, b) => a * b, 1) * ITEM_BYTES[dtype];
    if (!Number.isSafeInteger(want)) fail(`tensor '${name}' has shape [${shape.join(',')}], too many elements`);
    if (end - begin !== want)
      fail(
        `tensor '${name}' (${dtype}, shape [${shape.join(',')}]) needs ${want} bytes but data_offsets [${begin}, ${end}] span ${end - begin}`,
      );
    entries.push({ name, dtype, shape: shape as number[], begin, end });
  }

  const dataStart = 8 + n;
  const dataLen = bytes.length - dataStart;
  // The data area must be tiled exactly: sorted by begin, each starts where the last ended.
  const sorted = entries.slice().sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = 0;
  for (const e of sorted) {
    if (e.end > dataLen)
      fail(`tensor '${e.name}' has data_offsets [${e.begin}, ${e.end}] beyond the ${dataLen}-byte data area`);
    if (e.begin < pos)
      fail(`tensor '${e.name}' at [${e.begin}, ${e.end}] overlaps the tensor before it (which ends at ${pos})`);
    if (e.begin > pos)
      fail(`gap in the data area: bytes [${pos}, ${e.begin}) belong to no tensor (before '${e.name}')`);
    pos = e.end;
  }
  if (pos !== dataLen) fail(`the data area holds ${dataLen} bytes but the tensors cover ${pos}`);

  const tensors = new Map<string, RawTensor>();
  const headers = new Map<string, TensorHeader>(entries.map((e) => [e.name, { dtype: e.dtype, shape: e.shape }]));
  if (!withData) return { tensors, metadata, headers };
  for (const e of entries) {
    const raw = bytes.subarray(dataStart + e.begin, dataStart + e.end);
    tensors.set(e.name, { dtype: surfDType(e.dtype), shape: e.shape, data: decodeElements(e.name, e.dtype, raw) });
  }
  return { tensors, metadata, headers };
}

/**
 * Loose objects: `"<type> <size>\0" + content`, zlib-compressed, stored at
 * `objects/<first two hex digits>/<the rest>`. The rules mirror git's object-file.c
 * (`parse_loose_header`, `unpack_loose_rest`): a known type, a decimal size without leading
 * zeros that equals the content length, one zlib stream with nothing after it.
 */
import { asciiBytes, toHex } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';
import { checkObjectFormat, pureHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { pakoZlib, LOOSE_COMPRESSION_DEFAULT, type ZlibProvider } from './zlib.js';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export const OBJECT_TYPES: readonly ObjectType[] = ['blob', 'tree', 'commit', 'tag'];

/** git's MAX_HEADER_LEN: a loose header longer than this is rejected. */
export const MAX_HEADER_LENGTH = 32;

export interface FrameHeader {
  type: ObjectType;
  /** The size the header declares (not yet checked against any content). */
  size: number;
  /** Bytes of the header including its NUL: where the content starts. */
  headerLength: number;
}

export interface Framed {
  type: ObjectType;
  content: Uint8Array;
}

const SPACE = 0x20;
const NUL = 0;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

function badObject(reason: string, message: string, data: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_OBJECT', message, { reason, ...data });
}

export function isObjectType(t: unknown): t is ObjectType {
  return t === 'blob' || t === 'tree' || t === 'commit' || t === 'tag';
}

function checkType(type: unknown): ObjectType {
  if (!isObjectType(type)) {
    throw new ScalpelError('BAD_ARGUMENT', `unknown object type ${JSON.stringify(type)}`, {
      name: 'type',
      value: type,
      reason: 'unknown-type',
    });
  }
  return type;
}

function typeAt(bytes: Uint8Array, end: number): ObjectType | undefined {
  for (const t of OBJECT_TYPES) {
    if (t.length !== end) continue;
    let same = true;
    for (let i = 0; i < end; i++) {
      if (bytes[i] !== t.charCodeAt(i)) {
        same = false;
        break;
      }
    }
    if (same) return t;
  }
  return undefined;
}

/** `"<type> <size>\0"` */
export function frameHeader(type: ObjectType, size: number): Uint8Array {
  return asciiBytes(`${checkType(type)} ${size}\0`);
}

/** `"<type> <size>\0" + content`: the bytes an object id hashes and a loose file deflates. */
export function frameObject(type: ObjectType, content: Uint8Array): Uint8Array {
  const header = frameHeader(type, content.length);
  const out = new Uint8Array(header.length + content.length);
  out.set(header, 0);
  out.set(content, header.length);
  return out;
}

/**
 * Parses the header at the start of `bytes` (which may hold only a prefix of the object).
 * BAD_OBJECT reasons: `truncated-header`, `header-too-long`, `bad-type`, `bad-size`.
 */
export function parseFrameHeader(bytes: Uint8Array): FrameHeader {
  const limit = Math.min(bytes.length, MAX_HEADER_LENGTH);
  let nul = -1;
  for (let i = 0; i < limit; i++) {
    if (bytes[i] === NUL) {
      nul = i;
      break;
    }
  }
  if (nul < 0) {
    if (bytes.length >= MAX_HEADER_LENGTH)
      throw badObject('header-too-long', `object header longer than ${MAX_HEADER_LENGTH} bytes`, { offset: MAX_HEADER_LENGTH });
    throw badObject('truncated-header', 'object header is not NUL-terminated', { offset: bytes.length });
  }
  const space = bytes.subarray(0, nul).indexOf(SPACE);
  const type = space < 0 ? undefined : typeAt(bytes, space);
  if (type === undefined) throw badObject('bad-type', 'object header names no known type (blob, tree, commit, tag)', { offset: 0 });
  const size = parseSize(bytes, space + 1, nul);
  return { type, size, headerLength: nul + 1 };
}

/** Decimal digits in [start, end): at least one, no leading zero unless the number is 0. */
function parseSize(bytes: Uint8Array, start: number, end: number): number {
  const bad = (why: string) => badObject('bad-size', `object header size ${why}`, { offset: start });
  if (start >= end) throw bad('is empty');
  if (bytes[start] === DIGIT_0 && end - start > 1) throw bad('has a leading zero');
  let size = 0;
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c < DIGIT_0 || c > DIGIT_9) throw bad('is not a decimal number');
    size = size * 10 + (c - DIGIT_0);
  }
  if (!Number.isSafeInteger(size)) throw bad('is too large');
  return size;
}

/** Splits a framed object; the content is a view into `bytes`. BAD_OBJECT `size-mismatch` if the length differs. */
export function parseFramed(bytes: Uint8Array): Framed {
  const h = parseFrameHeader(bytes);
  const actual = bytes.length - h.headerLength;
  if (actual !== h.size) {
    throw badObject('size-mismatch', `object header declares ${h.size} bytes but ${actual} follow`, {
      offset: h.headerLength,
      expected: h.size,
      found: actual,
    });
  }
  return { type: h.type, content: bytes.subarray(h.headerLength) };
}

/** The object id (lowercase hex) of `content` as an object of `type`. */
export function objectId(type: ObjectType, content: Uint8Array, format: ObjectFormat = 'sha1', hash: HashProvider = pureHash): string {
  const state = hash.create(checkObjectFormat(format));
  state.update(frameHeader(type, content.length)).update(content);
  return toHex(state.digest());
}

export interface EncodeLooseOptions {
  /** zlib level -1..9; git's `core.loosecompression` default is 1 (best speed). */
  level?: number;
  zlib?: ZlibProvider;
}

/** The bytes of a loose object file. */
export function encodeLooseObject(type: ObjectType, content: Uint8Array, opts: EncodeLooseOptions = {}): Uint8Array {
  const zlib = opts.zlib ?? pakoZlib;
  return zlib.deflate(frameObject(type, content), opts.level ?? LOOSE_COMPRESSION_DEFAULT);
}

export interface DecodeLooseOptions {
  zlib?: ZlibProvider;
  /** When given, the object's id must equal it (BAD_OBJECT `oid-mismatch`). */
  expectOid?: string;
  /** Defaults to the format `expectOid`'s length implies, else sha1. */
  format?: ObjectFormat;
  hash?: HashProvider;
}

function expectedFormat(opts: DecodeLooseOptions): ObjectFormat {
  if (opts.format !== undefined) return checkObjectFormat(opts.format);
  return opts.expectOid?.length === 64 ? 'sha256' : 'sha1';
}

/**
 * Inflates and parses a loose object file. The declared size is only compared with the inflated
 * length, never used to allocate. BAD_ZLIB for a corrupt stream; BAD_OBJECT for the framing
 * (see parseFramed) or `oid-mismatch`; errors carry `data.oid` when `expectOid` is given.
 */
export function decodeLooseObject(bytes: Uint8Array, opts: DecodeLooseOptions = {}): Framed {
  const format = expectedFormat(opts);
  const oid = opts.expectOid;
  if (oid !== undefined) checkOid(oid, format);
  try {
    const raw = (opts.zlib ?? pakoZlib).inflate(bytes);
    const framed = parseFramed(raw);
    if (oid !== undefined) {
      const found = toHex((opts.hash ?? pureHash).create(format).update(raw).digest());
      if (found !== oid) throw badObject('oid-mismatch', `object hashes to ${found}, expected ${oid}`, { expected: oid, found });
    }
    return framed;
  } catch (e) {
    if (oid !== undefined && e instanceof ScalpelError && e.data.oid === undefined) e.data.oid = oid;
    throw e;
  }
}

/**
 * Reads only the header of a loose object file: inflates the compressed bytes a little at a time
 * and stops once the header's NUL is out, so a large blob's body is never inflated.
 */
export function readLooseHeader(bytes: Uint8Array, opts: { zlib?: ZlibProvider } = {}): FrameHeader {
  const inflater = (opts.zlib ?? pakoZlib).createInflate();
  const out = new Uint8Array(MAX_HEADER_LENGTH);
  let have = 0;
  let pos = 0;
  let step = 64;
  while (pos < bytes.length && have < MAX_HEADER_LENGTH && !inflater.ended) {
    const chunk = inflater.push(bytes.subarray(pos, pos + step));
    pos += step;
    step *= 2;
    const n = Math.min(chunk.length, MAX_HEADER_LENGTH - have);
    out.set(chunk.subarray(0, n), have);
    have += n;
    if (out.subarray(0, have).includes(NUL)) break;
  }
  return parseFrameHeader(out.subarray(0, have));
}

function checkOid(oid: string, format: ObjectFormat): void {
  if (oid.length !== oidLength(format) * 2 || !/^[0-9a-f]+$/.test(oid)) {
    throw new ScalpelError('BAD_ARGUMENT', `not a ${format} object id: ${JSON.stringify(oid)}`, {
      name: 'oid',
      value: oid,
      reason: 'bad-oid',
    });
  }
}

/** `"xx/yyyy…"`, relative to the objects directory. */
export function looseObjectPath(oid: string): string {
  checkOid(oid, oid.length === 64 ? 'sha256' : 'sha1');
  return `${oid.slice(0, 2)}/${oid.slice(2)}`;
}

export { ByteReader, readU16, readU32 } from './reader.js';
export { ByteWriter, writeU32 } from './writer.js';
export { toHex, fromHex, isHex, hexInto } from './hex.js';
export { compareBytes, compareRange, equalBytes, concatBytes } from './compare.js';
export { decodePath, encodePath, hasEscapedBytes, latin1Text, utf8Encode, utf8Decode, asciiBytes } from './text.js';

/** The pure-JS platform: @noble/hashes and pako, in every JavaScript runtime. An immutable constant. */
import { pureHash } from '../hash/index.js';
import { pakoZlib } from '../object/zlib.js';
import type { Platform } from './types.js';

export const purePlatform: Platform = Object.freeze({ name: 'pure', hash: pureHash, zlib: pakoZlib });

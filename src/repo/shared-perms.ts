/**
 * `core.sharedRepository`: the permissions git gives the files and directories it creates in a
 * repository several users share (path.c `calc_shared_perm`, `adjust_shared_perm`). The object
 * database applies them to what it writes.
 */
import { ScalpelError } from '../errors/index.js';

/**
 * `core.sharedRepository`: 'umask' (git's default: permissions as the umask leaves them),
 * 'group' (adds group read, and write where the owner has it), 'all' (also others' read), or an
 * octal mode such as 0o640 (exactly those bits; the owner must have read and write).
 * `parseSharedRepository` turns a config value into this.
 */
export type SharedRepository = 'umask' | 'group' | 'all' | number;

const S_ISGID = 0o2000;

/** git_config_perm: the value of `core.sharedRepository` as a SharedRepository. */
export function parseSharedRepository(value: string | boolean | null | undefined): SharedRepository {
  if (value === undefined || value === false) return 'umask';
  if (value === null || value === true) return 'group';
  const v = value.trim().toLowerCase();
  if (v === 'umask') return 'umask';
  if (v === 'group') return 'group';
  if (v === 'all' || v === 'world' || v === 'everybody') return 'all';
  if (/^[0-7]+$/.test(v)) {
    const n = parseInt(v, 8);
    if (n === 0) return 'umask';
    if (n === 1) return 'group';
    if (n === 2) return 'all';
    return checkShared(n);
  }
  if (v === 'true' || v === 'yes' || v === 'on' || v === '') return v === '' ? 'umask' : 'group';
  if (v === 'false' || v === 'no' || v === 'off') return 'umask';
  throw new ScalpelError('BAD_ARGUMENT', `bad core.sharedRepository value ${JSON.stringify(value)}`, {
    name: 'core.sharedRepository',
    value,
  });
}

function checkShared(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 0o7777 || (n & 0o600) !== 0o600) {
    throw new ScalpelError('BAD_ARGUMENT', `shared repository mode ${n.toString(8)} must give the owner read and write`, {
      name: 'sharedRepository',
      value: n,
    });
  }
  return n & 0o666;
}

/**
 * git's internal encoding: 0 umask, 0o660 group, 0o664 everybody, negative an exact mode.
 * BAD_ARGUMENT for a value that is not a SharedRepository.
 */
export function sharedSetting(s: SharedRepository | undefined): number {
  if (s === undefined || s === 'umask') return 0;
  if (s === 'group') return 0o660;
  if (s === 'all') return 0o664;
  if (typeof s === 'number') return -checkShared(s);
  throw new ScalpelError('BAD_ARGUMENT', `bad sharedRepository ${JSON.stringify(s)}`, { name: 'sharedRepository', value: s });
}

/** git's calc_shared_perm + adjust_shared_perm (path.c). */
export function sharedPermissions(shared: SharedRepository, mode: number, isDir: boolean): number {
  const setting = sharedSetting(shared);
  if (setting === 0) return mode;
  let tweak = setting < 0 ? -setting : setting;
  if (!(mode & 0o200)) tweak &= ~0o222;
  if (mode & 0o100) tweak |= (tweak & 0o444) >> 2;
  let m = setting < 0 ? (mode & ~0o777) | tweak : mode | tweak;
  if (isDir) {
    m |= (m & 0o444) >> 2;
    // g+s matters only if the group gets access (git: FORCE_DIR_SET_GID, Linux semantics)
    if (m & 0o060) m |= S_ISGID;
  }
  return m;
}

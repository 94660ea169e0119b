#!/usr/bin/env python3
"""The conformance corpus's own reference reader and builder (Python 3.8+, standard library only).

It shares no code with git-scalpel: it is a second, independent reading of git's index format
(Documentation/gitformat-index.txt and read-cache.c, dir.c, cache-tree.c, resolve-undo.c,
fsmonitor.c, split-index.c, ewah/ of git 2.39), so answers written from it can catch a bug in
git-scalpel and the other way round.

Usage:
  corpus.py build --cases TSV --commands DIR --out CONFORMANCE_DIR --git-version V --tmp DIR
      (run by make-corpus.sh) copy every written case, record git's listings, parse it into
      answers.json and check the parse against git; derive the derived and damaged cases;
      write manifest.json.
  corpus.py check [CONFORMANCE_DIR] [CASE...]
      read every case with this reader and compare with its answers.json: the reader checks
      itself against the corpus exactly as any other implementation's harness would.
  corpus.py read INDEX sha1|sha256 [SHARED_INDEX]
      print this reader's answer for one index file (JSON).
"""
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys

HASHLEN = {"sha1": 20, "sha256": 32}
CLASSES = [
    "truncated", "signature", "version", "checksum", "entry", "order",
    "extension", "unknown-extension", "split",
]


class Reject(Exception):
    """What a strict reader must report: one of CLASSES, and a sentence for people."""

    def __init__(self, cls, detail):
        assert cls in CLASSES, cls
        super().__init__("%s: %s" % (cls, detail))
        self.cls = cls
        self.detail = detail


def q(b):
    """Bytes for a message: a quoted string, bytes that are not UTF-8 as \\x escapes."""
    return "'%s'" % (b.decode("utf-8", "backslashreplace") if isinstance(b, bytes) else b)


class Short(Exception):
    """A field runs past the end of the bytes it lives in (the caller decides the class)."""


def u32(b, p, end):
    if p + 4 > end:
        raise Short()
    return struct.unpack_from(">I", b, p)[0]


def u16(b, p, end):
    if p + 2 > end:
        raise Short()
    return struct.unpack_from(">H", b, p)[0]


def varint(b, p, end):
    """git's decode_varint (varint.c): 7 bits a byte, high bit = more, +1 on every continuation."""
    if p >= end:
        raise Short()
    c = b[p]
    p += 1
    val = c & 0x7F
    while c & 0x80:
        if p >= end:
            raise Short()
        val += 1
        if val > 0xFFFFFFFF:
            raise Short()
        c = b[p]
        p += 1
        val = (val << 7) | (c & 0x7F)
    return val, p


def cstring(b, p, end):
    z = b.find(b"\0", p, end)
    if z < 0:
        raise Short()
    return b[p:z], z + 1


def stat9(b, p, end):
    if p + 36 > end:
        raise Short()
    v = struct.unpack_from(">9I", b, p)
    keys = ["ctimeSeconds", "ctimeNanoseconds", "mtimeSeconds", "mtimeNanoseconds", "dev", "ino", "uid", "gid", "size"]
    return dict(zip(keys, v)), p + 36


def ewah(b, p, end, what):
    """One serialised EWAH bitmap: u32 bit_size, u32 words, words, u32 rlw position."""
    try:
        bit_size = u32(b, p, end)
        n = u32(b, p + 4, end)
        if n * 8 > end - (p + 8):
            raise Short()
        words = struct.unpack_from(">%dQ" % n, b, p + 8)
        q = p + 8 + 8 * n
        rlw = u32(b, q, end)
    except Short:
        raise Reject("extension", "%s: EWAH bitmap runs past its extension" % what)
    if n and rlw >= n:
        raise Reject("extension", "%s: EWAH run-length word position %d is not below %d words" % (what, rlw, n))
    bits = []
    bit = 0
    i = 0
    while i < n:
        w = words[i]
        i += 1
        run_bit = w & 1
        run_len = (w >> 1) & 0xFFFFFFFF
        lits = w >> 33
        if lits > n - i:
            raise Reject("extension", "%s: EWAH literal count runs past the words" % what)
        if run_bit:
            bits.extend(range(bit, bit + 64 * run_len))
        bit += 64 * run_len
        for _ in range(lits):
            lw = words[i]
            i += 1
            k = 0
            while lw:
                if lw & 1:
                    bits.append(bit + k)
                lw >>= 1
                k += 1
            bit += 64
    if bits and bits[-1] >= bit_size:
        raise Reject("extension", "%s: EWAH bit %d is not below its bit size %d" % (what, bits[-1], bit_size))
    return {"bitSize": bit_size, "bits": bits}, q + 4


# ------------------------------------------------------------------ entries
def parse_entries(data, version, count, hl, body_end):
    """The entries as stored. Returns (entries, offset after the last one)."""
    fixed = 40 + hl
    if count > (body_end - 12) // (fixed + 2 + (1 if version == 4 else 2)):
        raise Reject("truncated", "%d entries cannot fit in %d bytes" % (count, body_end - 12))
    entries = []
    off = 12
    prev = b""
    for i in range(count):
        start = off
        try:
            f = struct.unpack_from(">10I", data, off) if off + 40 <= body_end else None
            if f is None or off + fixed + 2 > body_end:
                raise Short()
            oid = data[off + 40:off + fixed]
            flags = u16(data, off + fixed, body_end)
            p = off + fixed + 2
            ext = 0
            if flags & 0x4000:
                ext = u16(data, p, body_end)
                p += 2
                if ext & ~0x6000:
                    raise Reject("entry", "entry %d: unknown extended flag bits 0x%04x" % (i, ext))
            namelen = flags & 0xFFF
            if version == 4:
                strip, p = varint(data, p, body_end)
                if strip > len(prev):
                    raise Reject("entry", "entry %d: v4 prefix strip %d is longer than the previous path (%d bytes)" % (i, strip, len(prev)))
                suffix, after = cstring(data, p, body_end)
                name = prev[:len(prev) - strip] + suffix
                size = after - start
            else:
                if namelen == 0xFFF:
                    name, _ = cstring(data, p, body_end)
                else:
                    if p + namelen > body_end:
                        raise Short()
                    name = data[p:p + namelen]
                size = ((p - start) + len(name) + 8) & ~7
                if start + size > body_end:
                    raise Short()
        except Short:
            raise Reject("truncated", "entry %d at byte %d runs past the end of the entries" % (i, start))
        entries.append({
            "name": name, "fields": f, "oid": oid, "flags": flags, "ext": ext,
            "offset": start, "size": size,
        })
        prev = name
        off = start + size
    return entries, off


def entry_answer(e):
    f = e["fields"]
    return {
        "path": e["name"].hex(),
        "mode": f[6],
        "oid": e["oid"].hex(),
        "stage": (e["flags"] >> 12) & 3,
        "flags": {
            "assumeValid": bool(e["flags"] & 0x8000),
            "extended": bool(e["flags"] & 0x4000),
            "skipWorktree": bool(e["ext"] & 0x4000),
            "intentToAdd": bool(e["ext"] & 0x2000),
        },
        "stat": {
            "ctimeSeconds": f[0], "ctimeNanoseconds": f[1], "mtimeSeconds": f[2], "mtimeNanoseconds": f[3],
            "dev": f[4], "ino": f[5], "uid": f[7], "gid": f[8], "size": f[9],
        },
    }


# --------------------------------------------------------------- extensions
def ext_tree(b, p, end, hl):
    nodes = []
    pending = [1]  # nodes still to read at each open level
    while pending:
        if pending[-1] == 0:
            pending.pop()
            continue
        pending[-1] -= 1
        try:
            name, p = cstring(b, p, end)
            nl = b.find(b"\n", p, end)
            if nl < 0:
                raise Short()
            line = b[p:nl].decode("latin-1")
        except Short:
            raise Reject("extension", "TREE: node %d runs past the extension" % len(nodes))
        m = re.fullmatch(r"(-1|0|[1-9][0-9]*) (0|[1-9][0-9]*)", line)
        if not m:
            raise Reject("extension", "TREE: node %d has counts %r" % (len(nodes), line))
        count, sub = int(m.group(1)), int(m.group(2))
        if count > 0x7FFFFFFF or sub > 0x7FFFFFFF:
            raise Reject("extension", "TREE: node %d counts out of range" % len(nodes))
        p = nl + 1
        node = {"name": name.hex(), "entryCount": count, "subtreeCount": sub, "oid": None}
        if count >= 0:
            if p + hl > end:
                raise Reject("extension", "TREE: node %d id runs past the extension" % len(nodes))
            node["oid"] = b[p:p + hl].hex()
            p += hl
        nodes.append(node)
        pending.append(sub)
    if p != end:
        raise Reject("extension", "TREE: %d bytes after the root tree" % (end - p))
    return {"nodes": nodes}


def ext_reuc(b, p, end, hl):
    records = []
    while p < end:
        try:
            path, p = cstring(b, p, end)
            modes = []
            for _ in range(3):
                s, p = cstring(b, p, end)
                if not re.fullmatch(rb"[0-7]+", s):
                    raise Reject("extension", "REUC: mode %s of %s is not octal" % (q(s), q(path)))
                modes.append(int(s, 8))
            oids = []
            for m in modes:
                if m:
                    if p + hl > end:
                        raise Short()
                    oids.append(b[p:p + hl].hex())
                    p += hl
                else:
                    oids.append(None)
        except Short:
            raise Reject("extension", "REUC: record %d runs past the extension" % len(records))
        records.append({"path": path.hex(), "modes": modes, "oids": oids})
    return {"records": records}


def ext_untr(b, p, end, hl):
    if end - p < 2 or b[end - 1] != 0:
        raise Reject("extension", "UNTR: payload does not end in a NUL")
    e = end - 1
    try:
        n, p = varint(b, p, e)
        if p + n > e:
            raise Short()
        ident = b[p:p + n]
        p += n
        info_stat, p = stat9(b, p, e)
        excl_stat, p = stat9(b, p, e)
        dir_flags = u32(b, p, e)
        p += 4
        if p + 2 * hl > e:
            raise Short()
        info_oid = b[p:p + hl].hex()
        excl_oid = b[p + hl:p + 2 * hl].hex()
        p += 2 * hl
        per_dir, p = cstring(b, p, e)
    except Short:
        raise Reject("extension", "UNTR: header runs past the extension")
    out = {
        "ident": ident.hex(),
        "infoExclude": {"oid": info_oid, "stat": info_stat},
        "excludesFile": {"oid": excl_oid, "stat": excl_stat},
        "dirFlags": dir_flags,
        "excludePerDir": per_dir.hex(),
        "dirs": [],
    }
    if p >= e:
        return out  # rootless: the varint 0 git writes is the final NUL
    try:
        count, p = varint(b, p, e)
        if count == 0:
            if p != e:
                raise Reject("extension", "UNTR: bytes after a zero directory count")
            return out
        dirs = []
        pending = [1]
        while pending:
            if pending[-1] == 0:
                pending.pop()
                continue
            pending[-1] -= 1
            if len(dirs) >= count:
                raise Reject("extension", "UNTR: more directory blocks than the count %d" % count)
            un, p = varint(b, p, e)
            dn, p = varint(b, p, e)
            name, p = cstring(b, p, e)
            untracked = []
            for _ in range(un):
                s, p = cstring(b, p, e)
                untracked.append(s.hex())
            dirs.append({"name": name.hex(), "untracked": untracked, "dirCount": dn,
                         "valid": False, "checkOnly": False, "stat": None, "excludeOid": None})
            pending.append(dn)
    except Short:
        raise Reject("extension", "UNTR: directory blocks run past the extension")
    if len(dirs) != count:
        raise Reject("extension", "UNTR: directory count %d, the tree holds %d" % (count, len(dirs)))
    valid, p = ewah(b, p, e, "UNTR valid")
    check, p = ewah(b, p, e, "UNTR check_only")
    sha, p = ewah(b, p, e, "UNTR sha_valid")
    for bm in (valid, check, sha):
        if bm["bits"] and bm["bits"][-1] >= count:
            raise Reject("extension", "UNTR: bitmap bit past the directory count")
    for i in check["bits"]:
        dirs[i]["checkOnly"] = True
    try:
        for i in valid["bits"]:
            dirs[i]["valid"] = True
            dirs[i]["stat"], p = stat9(b, p, e)
        for i in sha["bits"]:
            if p + hl > e:
                raise Short()
            dirs[i]["excludeOid"] = b[p:p + hl].hex()
            p += hl
    except Short:
        raise Reject("extension", "UNTR: stat data or ids run past the extension")
    if p != e:
        raise Reject("extension", "UNTR: %d unexpected bytes before the final NUL" % (e - p))
    out["dirs"] = dirs
    return out


def ext_fsmn(b, p, end):
    try:
        version = u32(b, p, end)
        p += 4
        if version == 1:
            if p + 8 > end:
                raise Short()
            out = {"version": 1, "sinceNanoseconds": str(struct.unpack_from(">Q", b, p)[0])}
            p += 8
        elif version == 2:
            token, p = cstring(b, p, end)
            out = {"version": 2, "token": token.hex()}
        else:
            raise Reject("extension", "FSMN: bad fsmonitor version %d" % version)
        size = u32(b, p, end)
        p += 4
    except Short:
        raise Reject("extension", "FSMN: runs past the extension")
    if size > end - p:
        raise Reject("extension", "FSMN: bitmap size %d runs past the extension" % size)
    bm, q = ewah(b, p, p + size, "FSMN")
    if q != p + size:
        raise Reject("extension", "FSMN: bitmap size says %d bytes, the bitmap has %d" % (size, q - p))
    out["bitmap"] = bm
    out["trailing"] = b[q:end].hex() if q < end else None
    return out


def ext_link(b, p, end, hl):
    if end - p < hl:
        raise Reject("extension", "link: shorter than an object id")
    out = {"baseOid": b[p:p + hl].hex(), "deleteBitmap": None, "replaceBitmap": None}
    p += hl
    if p == end:
        return out
    out["deleteBitmap"], p = ewah(b, p, end, "link delete")
    out["replaceBitmap"], p = ewah(b, p, end, "link replace")
    if p != end:
        raise Reject("extension", "link: bytes after the replace bitmap")
    return out


def parse_extension(sig, b, p, end, hl):
    if sig == "TREE":
        return ext_tree(b, p, end, hl)
    if sig == "REUC":
        return ext_reuc(b, p, end, hl)
    if sig == "UNTR":
        return ext_untr(b, p, end, hl)
    if sig == "FSMN":
        return ext_fsmn(b, p, end)
    if sig == "EOIE":
        if end - p != 4 + hl:
            raise Reject("extension", "EOIE: size %d, expected %d" % (end - p, 4 + hl))
        return {"offset": struct.unpack_from(">I", b, p)[0], "hash": b[p + 4:end].hex()}
    if sig == "IEOT":
        n = end - p
        if n < 4 or (n - 4) % 8:
            raise Reject("extension", "IEOT: size %d is not 4 + 8k" % n)
        version = struct.unpack_from(">I", b, p)[0]
        if version != 1:
            raise Reject("extension", "IEOT: unknown version %d" % version)
        blocks = [dict(zip(("offset", "count"), struct.unpack_from(">II", b, q))) for q in range(p + 4, end, 8)]
        return {"version": version, "blocks": blocks}
    if sig == "link":
        return ext_link(b, p, end, hl)
    if sig == "sdir":
        if end != p:
            raise Reject("extension", "sdir: the sparse-directory marker has a payload")
        return {}
    if not ("A" <= sig[0] <= "Z"):
        raise Reject("unknown-extension", "extension %r is required (lowercase) and not understood" % sig)
    return {"raw": b[p:end].hex()}


# -------------------------------------------------------------------- index
def read_index(data, fmt, shared=None):
    """Strict read. Returns the answer's "index" object; raises Reject. `shared`: the shared index bytes."""
    hl = HASHLEN[fmt]
    if len(data) < 12 + hl:
        raise Reject("truncated", "%d bytes is shorter than a header and a trailer" % len(data))
    if data[:4] != b"DIRC":
        raise Reject("signature", "signature %s is not DIRC" % q(data[:4]))
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise Reject("version", "version %d" % version)
    body_end = len(data) - hl
    trailer = data[body_end:]
    skip_hash = trailer == b"\0" * hl
    if not skip_hash and hashlib.new(fmt, data[:body_end]).digest() != trailer:
        raise Reject("checksum", "the trailer is not the %s of the content" % fmt)
    entries, off = parse_entries(data, version, count, hl, body_end)
    exts = []
    while off < body_end:
        if off + 8 > body_end:
            raise Reject("truncated", "%d stray bytes after the entries at byte %d" % (body_end - off, off))
        sig = data[off:off + 4].decode("latin-1")
        size = struct.unpack_from(">I", data, off + 4)[0]
        if size > body_end - off - 8:
            raise Reject("truncated", "extension %r at byte %d claims %d bytes, %d left" % (sig, off, size, body_end - off - 8))
        x = {"signature": sig, "offset": off, "size": size}
        x.update(parse_extension(sig, data, off + 8, off + 8 + size, hl))
        exts.append(x)
        off += 8 + size
    link = next((x for x in exts if x["signature"] == "link"), None)
    if not link:
        for i, e in enumerate(entries):
            if not e["name"]:
                raise Reject("entry", "entry %d has an empty path (only replaced entries of a split index may)" % i)
    merged = entries
    if link:
        merged = merge_split(entries, link, shared, fmt)
    fsmn = next((x for x in exts if x["signature"] == "FSMN"), None)
    if fsmn and fsmn["bitmap"]["bitSize"] > len(merged):
        raise Reject("extension", "FSMN bitmap covers %d entries, the index has %d" % (fsmn["bitmap"]["bitSize"], len(merged)))
    check_order(merged)
    out = {
        "version": version,
        "entryCount": count,
        "skipHash": skip_hash,
        "checksum": None if skip_hash else trailer.hex(),
        "entries": [entry_answer(e) for e in merged],
        "extensions": exts,
    }
    if link:
        out["fileEntries"] = [entry_answer(e) for e in entries]
    return out


def merge_split(own, link, shared, fmt):
    """split-index.c merge_base_index, then add_index_entry of the split file's added entries."""
    if shared is None:
        raise Reject("split", "the shared index sharedindex.%s is missing" % link["baseOid"])
    hl = HASHLEN[fmt]
    if len(shared) < hl or shared[-hl:].hex() != link["baseOid"]:
        raise Reject("split", "the shared index's checksum is not sharedindex.%s" % link["baseOid"])
    try:
        base_index = read_index(shared, fmt)
    except Reject as r:
        raise Reject("split", "the shared index does not read: %s" % r)
    # entries of the shared index, with their raw fields (re-parsed: read_index gives answers)
    data = shared
    version, count = struct.unpack_from(">II", data, 4)
    base, _ = parse_entries(data, version, count, hl, len(data) - hl)
    assert len(base) == len(base_index["entries"])
    base = list(base)
    removed = [False] * len(base)
    nr_rep = 0
    for pos in (link["replaceBitmap"] or {"bits": []})["bits"]:
        if pos >= len(base):
            raise Reject("split", "position for replacement %d exceeds base index size %d" % (pos, len(base)))
        if nr_rep >= len(own):
            raise Reject("split", "too many replacements (%d vs %d)" % (nr_rep, len(own)))
        if own[nr_rep]["name"]:
            raise Reject("split", "entry %d should have a zero-length name (it replaces %d)" % (nr_rep, pos))
        e = dict(own[nr_rep])
        e["name"] = base[pos]["name"]
        base[pos] = e
        nr_rep += 1
    for pos in (link["deleteBitmap"] or {"bits": []})["bits"]:
        if pos >= len(base):
            raise Reject("split", "position for delete %d exceeds base index size %d" % (pos, len(base)))
        removed[pos] = True
    out = [e for i, e in enumerate(base) if not removed[i]]
    for e in own[nr_rep:]:
        if not e["name"]:
            raise Reject("split", "an added entry has an empty name")
        stage = (e["flags"] >> 12) & 3
        # add_index_entry: same path and stage replaces; a stage-0 entry replaces every stage
        out = [x for x in out if not (x["name"] == e["name"] and (stage == 0 or ((x["flags"] >> 12) & 3) == stage))]
        out.append(e)
        out.sort(key=lambda x: (x["name"], (x["flags"] >> 12) & 3))
    return out


def check_order(entries):
    """read-cache.c check_ce_order (what git fsck verifies)."""
    for i in range(1, len(entries)):
        a, b = entries[i - 1], entries[i]
        sa, sb = (a["flags"] >> 12) & 3, (b["flags"] >> 12) & 3
        if a["name"] > b["name"]:
            raise Reject("order", "entries %d and %d are not sorted by path" % (i - 1, i))
        if a["name"] == b["name"]:
            if sa == 0:
                raise Reject("order", "multiple stage entries for merged file %s" % q(a["name"]))
            if sa > sb:
                raise Reject("order", "unordered stage entries for %s" % q(b["name"]))


def read_case_bytes(case_dir, answers):
    data = open(os.path.join(case_dir, answers["files"]["index"]), "rb").read()
    shared = None
    if answers["files"].get("sharedIndex"):
        shared = open(os.path.join(case_dir, answers["files"]["sharedIndex"]), "rb").read()
    return data, shared


def read_result(data, fmt, shared):
    try:
        return {"result": "index", "index": read_index(data, fmt, shared)}
    except Reject as r:
        return {"result": "error", "error": {"class": r.cls, "detail": r.detail}}


# ===================================================================== build
def sh(args, cwd, env=None, input=None):
    full = dict(os.environ)
    if env:
        full.update(env)
    p = subprocess.run(args, cwd=cwd, env=full, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def run_git(cwd, args, index_file=None):
    env = {"GIT_INDEX_FILE": index_file} if index_file else None
    return sh(["git"] + args, cwd, env)


def clean(text, tmp):
    s = text.decode("utf-8", "backslashreplace")
    return s.replace(tmp, "$TMP")


def git_listing(cwd, index_file, sparse, tmp, fsck=True):
    """What git prints about the index: listings and the verdicts of ls-files and fsck."""
    out = {}
    rc, so, se = run_git(cwd, ["ls-files", "-s", "--debug"], index_file)
    out["lsFiles"] = {"exitCode": rc, "stderr": clean(se, tmp)}
    if rc == 0:
        out["lsFiles"]["stageDebug"] = so.decode("ascii")
        rc2, so2, _ = run_git(cwd, ["ls-files", "--resolve-undo"], index_file)
        out["resolveUndo"] = so2.decode("ascii") if rc2 == 0 else None
        if sparse:
            _, so3, _ = run_git(cwd, ["ls-files", "--sparse", "-s", "--debug"], index_file)
            out["sparseStageDebug"] = so3.decode("ascii")
    if fsck:
        rc, so, se = run_git(cwd, ["fsck", "--no-progress", "--no-dangling"], index_file)
        out["fsck"] = {"exitCode": rc, "stderr": clean(se, tmp)}
    return out


def parse_debug_z(raw):
    """`git ls-files -s --debug -z`: mode oid stage TAB path NUL, then five debug lines."""
    rows = []
    p = 0
    rx = re.compile(rb"  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: (\d+)\tino: (\d+)\n  uid: (\d+)\tgid: (\d+)\n  size: (\d+)\tflags: ([0-9a-f]+)\n")
    while p < len(raw):
        z = raw.index(b"\0", p)
        head = raw[p:z]
        meta, path = head.split(b"\t", 1)
        mode, oid, stage = meta.split(b" ")
        m = rx.match(raw, z + 1)
        if not m:
            raise SystemExit("cannot parse git ls-files --debug output near byte %d" % z)
        v = [int(x) for x in m.groups()[:9]]
        rows.append({"path": path, "mode": int(mode, 8), "oid": oid.decode(), "stage": int(stage),
                     "stat": v, "flags": int(m.group(10), 16)})
        p = m.end()
    return rows


def check_against_git(name, idx, cwd, index_file, sparse):
    """The reader's entries must be exactly what git lists (flags: the on-disk bits of git's ce_flags)."""
    args = ["ls-files", "-s", "--debug", "-z"] + (["--sparse"] if sparse else [])
    rc, so, se = run_git(cwd, args, index_file)
    if rc != 0:
        raise SystemExit("%s: git ls-files failed: %s" % (name, se.decode()))
    rows = parse_debug_z(so)
    got = idx["entries"]
    if len(rows) != len(got):
        raise SystemExit("%s: git lists %d entries, the reader %d" % (name, len(rows), len(got)))
    keys = ["ctimeSeconds", "ctimeNanoseconds", "mtimeSeconds", "mtimeNanoseconds", "dev", "ino", "uid", "gid", "size"]
    for r, e in zip(rows, got):
        fl = e["flags"]
        want = (fl["assumeValid"] << 15) | (fl["extended"] << 14) | (e["stage"] << 12) | (fl["skipWorktree"] << 30) | (fl["intentToAdd"] << 29)
        # in-memory bits git may add: CE_UPDATE_IN_BASE (split), CE_FSMONITOR_VALID
        seen = r["flags"] & ~((1 << 27) | (1 << 21))
        problems = []
        if r["path"].hex() != e["path"]:
            problems.append("path")
        if r["mode"] != e["mode"] or r["oid"] != e["oid"] or r["stage"] != e["stage"]:
            problems.append("mode/oid/stage")
        if [e["stat"][k] for k in keys] != r["stat"]:
            problems.append("stat")
        if seen != want:
            problems.append("flags %x vs %x" % (seen, want))
        if problems:
            raise SystemExit("%s: entry %r differs from git's listing: %s" % (name, r["path"], ", ".join(problems)))
    # resolve-undo: git lists every record's stages, records sorted by path
    rc, so, _ = run_git(cwd, ["ls-files", "--resolve-undo", "-z"], index_file)
    want_ru = [x for x in so.split(b"\0") if x]
    reuc = next((x for x in idx["extensions"] if x["signature"] == "REUC"), None)
    got_ru = []
    if reuc:
        for rec in sorted(reuc["records"], key=lambda r: bytes.fromhex(r["path"])):
            for s in range(3):
                if rec["modes"][s]:
                    got_ru.append(b"%06o %s %d\t%s" % (rec["modes"][s], rec["oids"][s].encode(), s + 1, bytes.fromhex(rec["path"])))
    if got_ru != want_ru:
        raise SystemExit("%s: resolve-undo records differ from git ls-files --resolve-undo" % name)


def features_of(idx, fmt):
    sigs = [x["signature"] for x in idx["extensions"]]
    f = ["v%d" % idx["version"], fmt]
    f += sigs
    if idx["skipHash"]:
        f.append("skipHash")
    ents = idx["entries"]
    if any(e["stage"] for e in ents):
        f.append("conflicts")
    if any(e["flags"]["intentToAdd"] for e in ents):
        f.append("intent-to-add")
    if any(e["flags"]["skipWorktree"] for e in ents):
        f.append("skip-worktree")
    if any(e["flags"]["assumeValid"] for e in ents):
        f.append("assume-unchanged")
    modes = {e["mode"] for e in ents}
    for m, n in ((0o100755, "executable"), (0o120000, "symlink"), (0o160000, "gitlink"), (0o040000, "sparse-directory")):
        if m in modes:
            f.append(n)
    if any(len(bytes.fromhex(e["path"])) >= 0xFFF for e in ents):
        f.append("long-path")
    def utf8(h):
        try:
            bytes.fromhex(h).decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False
    if any(not utf8(e["path"]) for e in ents):
        f.append("non-utf8-path")
    return f


def dumps(obj, level=0, flat_at=3):
    """JSON with one line per entry, extension, case...: objects nested deeper than `flat_at` on one line."""
    pad = " " * level
    if level >= flat_at or not isinstance(obj, (dict, list)) or not obj:
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":") if level >= flat_at else (", ", ": "))
    if isinstance(obj, list):
        if all(not isinstance(x, (dict, list)) for x in obj):
            return json.dumps(obj, ensure_ascii=True)
        return "[\n" + ",\n".join(pad + " " + dumps(x, level + 1, flat_at) for x in obj) + "\n" + pad + "]"
    return "{\n" + ",\n".join("%s %s: %s" % (pad, json.dumps(k), dumps(v, level + 1, flat_at)) for k, v in obj.items()) + "\n" + pad + "}"


def write_json(path, obj, flat_at=3):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(dumps(obj, 0, flat_at))
        fh.write("\n")


class Builder:
    def __init__(self, a):
        self.out = os.path.abspath(a.out)
        self.cases_dir = os.path.join(self.out, "cases")
        self.git_version = a.git_version
        self.tmp = a.tmp
        self.commands = a.commands
        self.cases = []  # manifest rows
        self.sources = {}  # name -> dict(cwd, fmt, answers, data, shared, sparse)
        self.tmproot = os.path.dirname(a.tmp)

    def add_case(self, name, kind, description, fmt, data, shared_name, shared, answers_extra, cwd, sparse=False, index_file=None, requires=None, fsck=True):
        d = os.path.join(self.cases_dir, name)
        os.makedirs(d)
        with open(os.path.join(d, "index"), "wb") as fh:
            fh.write(data)
        files = {"index": "index"}
        if shared is not None:
            files["sharedIndex"] = shared_name
            with open(os.path.join(d, shared_name), "wb") as fh:
                fh.write(shared)
        result = read_result(data, fmt, shared)
        answers = {"name": name, "kind": kind, "description": description, "objectFormat": fmt, "files": files}
        answers.update(result)
        if index_file is None:
            index_file = os.path.join(d, "index")
        answers["git"] = dict(version=self.git_version, **git_listing(cwd, index_file, sparse, self.tmproot, fsck=fsck))
        answers.update(answers_extra)
        return answers, d, files, result

    # ------------------------------------------------------------ foreign
    def foreign(self, root, source, entry):
        """A fixture another project commits, byte for byte; git 2.39 lists it in an empty repository."""
        name = entry["name"]
        fmt = entry.get("objectFormat", "sha1")
        data = open(os.path.join(root, entry["file"]), "rb").read()
        shared_name = shared = None
        if entry.get("sharedIndex"):
            shared_name = os.path.basename(entry["sharedIndex"])
            shared = open(os.path.join(root, entry["sharedIndex"]), "rb").read()
        cwd = os.path.join(self.tmp, "empty-" + fmt)
        if not os.path.isdir(cwd):
            os.makedirs(cwd)
            sh(["git", "init", "-q", "--object-format=" + fmt], cwd)
        prov = {"writtenBy": entry["writtenBy"], "project": source["project"], "repository": source["repository"],
                "commit": source["commit"], "path": entry["path"], "license": source["license"]}
        extra = {"provenance": prov}
        if "class" not in entry:
            extra["roundTrip"] = {"required": True}
        # the copy in cases/<name>/ is what git reads: a shared index is looked up beside it;
        # git fsck is not asked (the fixture's objects are not here)
        answers, d, files, result = self.add_case(name, "foreign", entry["description"], fmt, data, shared_name, shared, extra, cwd, fsck=False)
        if "class" in entry:
            if result["result"] != "error" or result["error"]["class"] != entry["class"]:
                raise SystemExit("%s: meant to be class %s, the reference reader says %s" % (name, entry["class"], result.get("error", "it reads")))
        else:
            if result["result"] != "index":
                raise SystemExit("%s: %s" % (name, result["error"]))
            check_against_git(name, result["index"], cwd, os.path.join(d, "index"), False)
        self.finish_case(name, "foreign", entry["description"], fmt, answers, d, files, {"gitVersion": entry["writtenBy"]})

    def finish_case(self, name, kind, description, fmt, answers, d, files, extra_manifest):
        ordered = {k: answers[k] for k in ("name", "kind", "description", "objectFormat", "files", "result") if k in answers}
        for k in ("index", "error", "roundTrip", "git", "provenance"):
            if k in answers:
                ordered[k] = answers[k]
        write_json(os.path.join(d, "answers.json"), ordered)
        row = {"name": name, "kind": kind, "description": description, "objectFormat": fmt, "files": files,
               "gitVersion": self.git_version}
        if answers["result"] == "index":
            row["version"] = answers["index"]["version"]
            row["features"] = features_of(answers["index"], fmt)
        else:
            row["class"] = answers["error"]["class"]
        row.update(extra_manifest)
        self.cases.append(row)

    # ------------------------------------------------------------ written
    def written(self, name, description, cwd, opts):
        o = dict(x.split("=", 1) if "=" in x else (x, True) for x in opts.split(";"))
        sparse = "sparse" in o
        fmt = run_git(cwd, ["rev-parse", "--show-object-format"])[1].decode().strip()
        live = run_git(cwd, ["rev-parse", "--path-format=absolute", "--git-path", "index"])[1].decode().strip()
        gitdir = run_git(cwd, ["rev-parse", "--path-format=absolute", "--git-dir"])[1].decode().strip()
        data = open(live, "rb").read()
        hl = HASHLEN[fmt]
        shared_name = shared = None
        try:
            read_index(data, fmt, None)
        except Reject as r:
            if r.cls != "split":
                raise SystemExit("%s: the reference reader rejects what git wrote: %s" % (name, r))
            # split: the shared index is the sharedindex.* file whose checksum the link names
            for fn in sorted(os.listdir(gitdir)):
                if fn.startswith("sharedindex."):
                    cand = open(os.path.join(gitdir, fn), "rb").read()
                    try:
                        read_index(data, fmt, cand)
                    except Reject:
                        continue
                    shared_name, shared = fn, cand
            if shared is None:
                raise SystemExit("%s: no sharedindex file in %s fits the link extension (%s)" % (name, gitdir, r))
        commands = [l.rstrip("\n") for l in open(os.path.join(self.commands, name), encoding="utf-8")]
        answers, d, files, result = self.add_case(
            name, "written", description, fmt, data, shared_name, shared,
            {"roundTrip": {"required": True}, "provenance": {"writtenBy": self.git_version, "commands": commands}},
            cwd, sparse=sparse, index_file=live)
        if result["result"] != "index":
            raise SystemExit("%s: %s" % (name, result["error"]))
        idx = result["index"]
        want_v = int(o["version"])
        want_e = [x for x in o["extensions"].split(",") if x]
        got_e = [x["signature"] for x in idx["extensions"]]
        if idx["version"] != want_v or got_e != want_e:
            raise SystemExit("%s: expected v%d %s, git wrote v%d %s" % (name, want_v, want_e, idx["version"], got_e))
        check_against_git(name, idx, cwd, live, sparse)
        if open(live, "rb").read() != data:
            raise SystemExit("%s: the index changed while git listed it" % name)
        if answers["git"]["lsFiles"]["exitCode"] != 0:
            raise SystemExit("%s: git ls-files fails on what git wrote" % name)
        self.finish_case(name, "written", description, fmt, answers, d, files, {})
        self.sources[name] = {"cwd": cwd, "fmt": fmt, "data": data, "shared": shared, "shared_name": shared_name,
                              "index": idx, "gitdir": gitdir, "sparse": sparse}
        if shared is not None:
            sname = name + "-shared"
            sdesc = "the shared index (%s) of case %s: an index file of its own" % (shared_name, name)
            a2, d2, f2, r2 = self.add_case(
                sname, "written", sdesc, fmt, shared, None, None,
                {"roundTrip": {"required": True}, "provenance": {"writtenBy": self.git_version, "sharedIndexOf": name, "file": shared_name}},
                cwd, index_file=os.path.join(gitdir, shared_name))
            sx = [x["signature"] for x in r2["index"]["extensions"]]
            sdesc += " (extensions: %s)" % ", ".join(sx) if sx else " (no extensions)"
            a2["description"] = sdesc
            check_against_git(sname, r2["index"], cwd, os.path.join(gitdir, shared_name), False)
            self.finish_case(sname, "written", sdesc, fmt, a2, d2, f2, {})
            self.sources[sname] = {"cwd": cwd, "fmt": fmt, "data": shared, "shared": None, "shared_name": None,
                                   "index": r2["index"], "gitdir": gitdir, "sparse": False}

    # ----------------------------------------------------- derived / damaged
    def derive(self, name, kind, source, description, make, expect=None, round_trip=None, requires=True, files_in_gitdir=None, shared="same"):
        """make(src) -> bytes (or (bytes, shared_name, shared_bytes))."""
        src = self.sources[source]
        fmt = src["fmt"]
        made = make(src)
        if isinstance(made, tuple):
            data, shared_name, shared_bytes = made
        else:
            data = made
            shared_name, shared_bytes = (src["shared_name"], src["shared"]) if shared == "same" else (None, None)
        if shared_bytes is not None and shared_bytes != src["shared"]:
            files_in_gitdir = dict(files_in_gitdir or {}, **{shared_name: shared_bytes})
        # git's verdict: the bytes as GIT_INDEX_FILE in the source repository (a copy of it when
        # the case needs other files in the git directory)
        cwd = src["cwd"]
        os.makedirs(self.tmp, exist_ok=True)
        tmpfile = os.path.join(self.tmp, name + ".index")
        with open(tmpfile, "wb") as fh:
            fh.write(data)
        if files_in_gitdir:
            copy = os.path.join(self.tmp, name + ".repo")
            top = run_git(cwd, ["rev-parse", "--show-toplevel"])[1].decode().strip()
            shutil.copytree(top, copy, symlinks=True)
            cwd = copy
            gd = run_git(cwd, ["rev-parse", "--path-format=absolute", "--git-dir"])[1].decode().strip()
            for fn, content in files_in_gitdir.items():
                with open(os.path.join(gd, fn), "wb") as fh:
                    fh.write(content)
        prov = {"source": source, "derivation": description}
        extra = {"provenance": prov}
        if round_trip is not None:
            extra["roundTrip"] = round_trip
        answers, d, files, result = self.add_case(name, kind, description, fmt, data, shared_name, shared_bytes, extra, cwd,
                                                  sparse=src["sparse"] and kind == "derived", index_file=tmpfile)
        if kind == "damaged":
            if result["result"] != "error" or result["error"]["class"] != expect:
                raise SystemExit("%s: meant to be class %s, the reference reader says %s" % (name, expect, result.get("error", "it reads")))
        elif result["result"] != "index":
            raise SystemExit("%s: derived case does not read: %s" % (name, result["error"]))
        man = {"source": source}
        if requires:
            man["requires"] = {"version": src["index"]["version"], "objectFormat": fmt}
        else:
            man["requires"] = {"objectFormat": fmt}
        if kind == "damaged":
            gl = answers["git"]["lsFiles"]
            fk = answers["git"]["fsck"]
            man["git"] = {"lsFilesExit": gl["exitCode"], "fsckExit": fk["exitCode"]}
        self.finish_case(name, kind, description, fmt, answers, d, files, man)


# ------------------------------------------------------------ byte surgery
def rehash(body, fmt):
    return body + hashlib.new(fmt, body).digest()


def body_of(data, fmt):
    return data[:len(data) - HASHLEN[fmt]]


def layout(src):
    """Entries and extension spans of a source case's bytes."""
    data, fmt = src["data"], src["fmt"]
    hl = HASHLEN[fmt]
    version, count = struct.unpack_from(">II", data, 4)
    entries, off = parse_entries(data, version, count, hl, len(data) - hl)
    spans = []
    p = off
    while p < len(data) - hl:
        sig = data[p:p + 4].decode("latin-1")
        size = struct.unpack_from(">I", data, p + 4)[0]
        spans.append({"signature": sig, "offset": p, "payload": data[p + 8:p + 8 + size]})
        p += 8 + size
    return version, entries, off, spans


def assemble(data, fmt, entries_bytes, count, spans, version=None):
    head = bytearray(data[:12])
    if version is not None:
        struct.pack_into(">I", head, 4, version)
    struct.pack_into(">I", head, 8, count)
    body = bytes(head) + entries_bytes
    for s in spans:
        body += s["signature"].encode("latin-1") + struct.pack(">I", len(s["payload"])) + s["payload"]
    return rehash(body, fmt)


def with_spans(src, f):
    """The source with its extension list replaced by f(spans)."""
    version, entries, off, spans = layout(src)
    data = src["data"]
    return assemble(data, src["fmt"], data[12:off], len(entries), f([dict(s) for s in spans]))


def with_payload(src, sig, f):
    def g(spans):
        for s in spans:
            if s["signature"] == sig:
                s["payload"] = f(s["payload"])
                return spans
        raise SystemExit("no %s extension in the source" % sig)
    return with_spans(src, g)


def set_bytes(data, off, new, fmt, rehashed=True):
    b = bytearray(data)
    b[off:off + len(new)] = new
    b = bytes(b)
    return rehash(body_of(b, fmt), fmt) if rehashed else b


def encode_varint(v):
    out = [v & 0x7F]
    v >>= 7
    while v:
        v -= 1
        out.insert(0, 0x80 | (v & 0x7F))
        v >>= 7
    return bytes(out)


def v4_entries(entries, data, hl, strip_override=None):
    """Re-encode v4 entries (fixed part as stored, names prefix-compressed against the previous)."""
    out = b""
    prev = b""
    for i, e in enumerate(entries):
        fixed_len = 40 + hl + 2 + (2 if e["flags"] & 0x4000 else 0)
        fixed = data[e["offset"]:e["offset"] + fixed_len] if "fixed" not in e else e["fixed"]
        name = e["name"]
        k = 0
        while k < len(prev) and k < len(name) and prev[k] == name[k]:
            k += 1
        strip = len(prev) - k
        suffix = name[k:]
        if strip_override and i in strip_override:
            strip, suffix = strip_override[i]
        out += fixed + encode_varint(strip) + suffix + b"\0"
        prev = name
    return out


def v2_entry_bytes(data, e):
    return data[e["offset"]:e["offset"] + e["size"]]


def build_damage(B):
    S = B.sources

    def dmg(name, source, cls, description, make, **kw):
        B.derive(name, "damaged", source, description, make, expect=cls, **kw)

    def drv(name, source, description, make, round_trip, **kw):
        B.derive(name, "derived", source, description, make, round_trip=round_trip, **kw)

    def mid_entry(src, k, into):
        _, entries, _, _ = layout(src)
        return entries[k]["offset"] + into

    def cut(n, rehashed=True):
        def f(src):
            body = src["data"][:n(src) if callable(n) else n]
            return rehash(body, src["fmt"]) if rehashed else body
        return f

    def ext_at(src, sig):
        return next(s for s in layout(src)[3] if s["signature"] == sig)

    # ----------------------------------------------------------- derived (valid)
    drv("derived-skiphash", "v2-basic", "v2-basic with an all-zero trailer, as index.skipHash=true (git 2.40+) writes it",
        lambda s: body_of(s["data"], s["fmt"]) + b"\0" * 20, {"required": True})
    drv("derived-skiphash-v4", "v4-flags", "v4-flags with an all-zero trailer (index.skipHash)",
        lambda s: body_of(s["data"], s["fmt"]) + b"\0" * 20, {"required": True})
    drv("derived-skiphash-sha256", "sha256-v2", "sha256-v2 with an all-zero 32-byte trailer (index.skipHash)",
        lambda s: body_of(s["data"], s["fmt"]) + b"\0" * 32, {"required": True})
    drv("derived-unknown-optional", "v2-basic", "v2-basic with an unknown optional extension 'ZZZZ' (uppercase: a reader skips it) after TREE",
        lambda s: with_spans(s, lambda sp: sp + [{"signature": "ZZZZ", "payload": b"opaque payload\0\1\2"}]),
        {"required": False, "reason": "a writer may drop an optional extension it does not understand (git does)"})
    drv("derived-unknown-optional-first", "reuc-v4", "reuc-v4 with unknown optional extensions 'Qxyz' (empty) before TREE and 'ZZZZ' after REUC",
        lambda s: with_spans(s, lambda sp: [{"signature": "Qxyz", "payload": b""}] + sp + [{"signature": "ZZZZ", "payload": bytes(range(64))}]),
        {"required": False, "reason": "a writer may drop an optional extension it does not understand (git does)"})

    # ------------------------------------------------------------------ truncated
    dmg("damaged-empty-file", "empty", "truncated", "a zero-byte index file", lambda s: b"", requires=False)
    dmg("damaged-header-only", "empty", "truncated", "the 12-byte header alone (DIRC, version 2, 0 entries), no trailer",
        lambda s: s["data"][:12], requires=False)
    dmg("damaged-short-trailer", "empty", "truncated", "the empty index without the last byte of its trailer (31 bytes)",
        lambda s: s["data"][:-1], requires=False)
    dmg("damaged-cut-in-entry", "v2-basic", "truncated", "v2-basic cut 30 bytes into its fourth entry, trailer recomputed",
        cut(lambda s: mid_entry(s, 3, 30)))
    dmg("damaged-cut-in-name", "v2-basic", "truncated", "v2-basic cut inside the path of its second entry, trailer recomputed",
        cut(lambda s: mid_entry(s, 1, 64)))
    dmg("damaged-cut-in-entry-v4", "v4-basic", "truncated", "v4-basic cut inside its eleventh entry, trailer recomputed",
        cut(lambda s: mid_entry(s, 10, 50)))
    dmg("damaged-cut-in-entry-sha256", "sha256-v2", "truncated", "sha256-v2 cut inside the object id of its second entry, trailer recomputed",
        cut(lambda s: mid_entry(s, 1, 50)))
    dmg("damaged-cut-in-long-name", "long-path", "truncated", "long-path cut inside the 4300-byte path (the NUL that ends a name longer than 0xFFF is missing), trailer recomputed",
        cut(lambda s: mid_entry(s, 3, 2000)))
    dmg("damaged-count-plus-one", "no-commit", "truncated", "no-commit (no extensions) with its entry count raised by one, trailer recomputed",
        lambda s: set_bytes(s["data"], 8, struct.pack(">I", struct.unpack_from(">I", s["data"], 8)[0] + 1), s["fmt"]))
    dmg("damaged-count-huge", "tree-valid", "truncated", "tree-valid claiming 0xFFFFFFFF entries, trailer recomputed",
        lambda s: set_bytes(s["data"], 8, b"\xff\xff\xff\xff", s["fmt"]))
    dmg("damaged-cut-in-ext-header", "v2-basic", "truncated", "v2-basic cut 4 bytes into the TREE extension header (signature only), trailer recomputed",
        cut(lambda s: ext_at(s, "TREE")["offset"] + 4))
    dmg("damaged-cut-in-ext-payload", "reuc", "truncated", "reuc cut in the middle of the REUC payload, trailer recomputed",
        cut(lambda s: ext_at(s, "REUC")["offset"] + 8 + len(ext_at(s, "REUC")["payload"]) // 2))
    dmg("damaged-ext-size-past-end", "v2-basic", "truncated", "v2-basic whose TREE size field claims 100 bytes more than the file holds, trailer recomputed",
        lambda s: set_bytes(s["data"], ext_at(s, "TREE")["offset"] + 4, struct.pack(">I", len(ext_at(s, "TREE")["payload"]) + 100), s["fmt"]))
    dmg("damaged-ext-size-huge", "untr", "truncated", "untr whose UNTR size field is 0xFFFFFFF0, trailer recomputed",
        lambda s: set_bytes(s["data"], ext_at(s, "UNTR")["offset"] + 4, b"\xff\xff\xff\xf0", s["fmt"]))
    dmg("damaged-ext-size-past-end-sha256", "sha256-v4", "truncated", "sha256-v4 whose TREE size field runs into the 32-byte trailer, trailer recomputed",
        lambda s: set_bytes(s["data"], ext_at(s, "TREE")["offset"] + 4, struct.pack(">I", len(ext_at(s, "TREE")["payload"]) + 8), s["fmt"]))

    # --------------------------------------------------------- signature, version
    dmg("damaged-signature", "v2-basic", "signature", "v2-basic with signature DIRX, trailer recomputed",
        lambda s: set_bytes(s["data"], 0, b"DIRX", s["fmt"]), requires=False)
    dmg("damaged-signature-case", "v4-basic", "signature", "v4-basic with signature 'dirc', trailer recomputed",
        lambda s: set_bytes(s["data"], 0, b"dirc", s["fmt"]), requires=False)
    dmg("damaged-signature-pack", "sha256-v2", "signature", "sha256-v2 whose first bytes say PACK, trailer recomputed",
        lambda s: set_bytes(s["data"], 0, b"PACK", s["fmt"]), requires=False)
    dmg("damaged-version-1", "v2-basic", "version", "v2-basic claiming version 1, trailer recomputed",
        lambda s: set_bytes(s["data"], 4, struct.pack(">I", 1), s["fmt"]), requires=False)
    dmg("damaged-version-5", "v4-basic", "version", "v4-basic claiming version 5, trailer recomputed",
        lambda s: set_bytes(s["data"], 4, struct.pack(">I", 5), s["fmt"]), requires=False)

    # ------------------------------------------------------------------ checksum
    def flip(off):
        def f(src):
            b = bytearray(src["data"])
            o = off(src) if callable(off) else off
            b[o] ^= 0x01
            return bytes(b)
        return f
    dmg("damaged-checksum-trailer", "v2-basic", "checksum", "v2-basic with one bit of its trailer flipped", flip(-1))
    dmg("damaged-checksum-content", "v2-basic", "checksum", "v2-basic with one bit of an entry's mtime flipped, trailer kept", flip(lambda s: 12 + 15))
    dmg("damaged-checksum-v4", "v4-flags", "checksum", "v4-flags with one bit of its trailer flipped", flip(-5))
    dmg("damaged-checksum-sha256", "sha256-v4", "checksum", "sha256-v4 with one bit of its 32-byte trailer flipped", flip(-32))
    dmg("damaged-checksum-extension", "untr", "checksum", "untr with one bit flipped inside the UNTR payload, trailer kept",
        flip(lambda s: ext_at(s, "UNTR")["offset"] + 20))

    # --------------------------------------------------------------------- entry
    def ext_flag_bits(src, k, bits):
        _, entries, _, _ = layout(src)
        e = [x for x in entries if x["flags"] & 0x4000][k]
        p = e["offset"] + 40 + HASHLEN[src["fmt"]] + 2
        return set_bytes(src["data"], p, struct.pack(">H", e["ext"] | bits), src["fmt"])
    dmg("damaged-extended-flags", "v3-flags", "entry", "v3-flags with the unused extended flag bit 0x1000 set on an entry, trailer recomputed",
        lambda s: ext_flag_bits(s, 0, 0x1000))
    dmg("damaged-extended-flags-reserved", "v3-all-flags", "entry", "v3-all-flags with the reserved extended flag bit 0x8000 set, trailer recomputed",
        lambda s: ext_flag_bits(s, 1, 0x8000))
    dmg("damaged-extended-flags-v4", "v4-flags", "entry", "v4-flags with extended flag bit 0x0001 set, trailer recomputed",
        lambda s: ext_flag_bits(s, 0, 0x0001))

    def v4_strip(src, k, delta):
        version, entries, off, spans = layout(src)
        hl = HASHLEN[src["fmt"]]
        prev = entries[k - 1]["name"] if k else b""
        ov = {k: (len(prev) + delta, entries[k]["name"])}
        eb = v4_entries(entries, src["data"], hl, ov)
        return assemble(src["data"], src["fmt"], eb, len(entries), spans)
    dmg("damaged-v4-strip-too-long", "v4-basic", "entry", "v4-basic whose sixth entry strips one byte more than the previous path has, trailer recomputed",
        lambda s: v4_strip(s, 5, 1))
    dmg("damaged-v4-strip-first", "v4-flags", "entry", "v4-flags whose first entry strips 3 bytes from the (empty) previous path, trailer recomputed",
        lambda s: v4_strip(s, 0, 3))

    def empty_name_v2(src, k):
        version, entries, off, spans = layout(src)
        hl = HASHLEN[src["fmt"]]
        data = src["data"]
        out = b""
        for i, e in enumerate(entries):
            if i != k:
                out += v2_entry_bytes(data, e)
                continue
            fixed_len = 40 + hl + 2 + (2 if e["flags"] & 0x4000 else 0)
            fixed = bytearray(data[e["offset"]:e["offset"] + fixed_len])
            struct.pack_into(">H", fixed, 40 + hl, e["flags"] & ~0xFFF)
            size = (fixed_len + 8) & ~7
            out += bytes(fixed) + b"\0" * (size - fixed_len)
        return assemble(data, src["fmt"], out, len(entries), spans)
    dmg("damaged-empty-name", "no-commit", "entry", "no-commit whose first entry has an empty path (name length 0), trailer recomputed",
        lambda s: empty_name_v2(s, 0))

    # --------------------------------------------------------------------- order
    def reorder(src, perm):
        version, entries, off, spans = layout(src)
        hl = HASHLEN[src["fmt"]]
        es = [entries[i] for i in perm]
        if version == 4:
            eb = v4_entries(es, src["data"], hl)
        else:
            eb = b"".join(v2_entry_bytes(src["data"], e) for e in es)
        return assemble(src["data"], src["fmt"], eb, len(es), spans)
    def swap(src, i, j):
        n = len(layout(src)[1])
        perm = list(range(n))
        perm[i], perm[j] = perm[j], perm[i]
        return reorder(src, perm)
    dmg("damaged-order-swapped", "v2-basic", "order", "v2-basic with its second and third entries swapped, trailer recomputed (git reads it; git fsck refuses)",
        lambda s: swap(s, 1, 2))
    dmg("damaged-order-swapped-v4", "v4-basic", "order", "v4-basic with two entries swapped (names re-compressed), trailer recomputed",
        lambda s: swap(s, 3, 7))
    dmg("damaged-order-duplicate", "tree-valid", "order", "tree-valid with its first entry stored twice, count raised, trailer recomputed",
        lambda s: reorder(s, [0] + list(range(len(layout(s)[1])))))
    dmg("damaged-order-slash", "v4-neighbours", "order", "v4-neighbours with 'a/b' moved before 'a-b' (a reader must compare bytes: '-' 0x2d < '/' 0x2f), trailer recomputed",
        lambda s: reorder(s, (lambda names: [names.index(b"a/b")] + [i for i in range(len(names)) if names[i] != b"a/b"])([e["name"] for e in layout(s)[1]])))

    def restage(src, k, stage):
        version, entries, off, spans = layout(src)
        hl = HASHLEN[src["fmt"]]
        e = entries[k]
        p = e["offset"] + 40 + hl
        return set_bytes(src["data"], p, struct.pack(">H", (e["flags"] & ~0x3000) | (stage << 12)), src["fmt"])
    def conflict_index(src, name, stage):
        return next(i for i, e in enumerate(layout(src)[1]) if e["name"] == name and (e["flags"] >> 12) & 3 == stage)
    dmg("damaged-stage0-beside-conflict", "conflict", "order", "conflict whose stage-1 entry of both.txt says stage 0 (a merged entry beside stages 2 and 3), trailer recomputed",
        lambda s: restage(s, conflict_index(s, b"both.txt", 1), 0))
    dmg("damaged-stages-reversed", "conflict", "order", "conflict with the stage 2 and stage 3 entries of both.txt stored in reverse, trailer recomputed",
        lambda s: swap(s, conflict_index(s, b"both.txt", 2), conflict_index(s, b"both.txt", 3)))

    # ------------------------------------------------------- unknown required
    dmg("damaged-required-extension", "v2-basic", "unknown-extension", "v2-basic with a lowercase (required) extension 'abcd' after TREE, trailer recomputed",
        lambda s: with_spans(s, lambda sp: sp + [{"signature": "abcd", "payload": b"\0\0\0\0"}]))
    dmg("damaged-required-extension-first", "reuc", "unknown-extension", "reuc with a required extension 'zzzz' before TREE, trailer recomputed",
        lambda s: with_spans(s, lambda sp: [{"signature": "zzzz", "payload": b""}] + sp))
    dmg("damaged-required-extension-sha256", "sha256-v2", "unknown-extension", "sha256-v2 with a required extension 'sdiX' (sdir's neighbour) after TREE, trailer recomputed",
        lambda s: with_spans(s, lambda sp: sp + [{"signature": "sdiX", "payload": b"x"}]))

    # ------------------------------------------------------------- extension
    def tree_edit(f):
        return lambda s: with_payload(s, "TREE", f)
    dmg("damaged-tree-count", "tree-valid", "extension", "tree-valid whose root TREE node has the entry count 'x7'",
        tree_edit(lambda p: p.replace(b"\0" + p[1:].split(b" ")[0] + b" ", b"\0x7 ", 1)))
    dmg("damaged-tree-subtrees", "tree-valid", "extension", "tree-valid whose root TREE node announces one subtree more than follow",
        tree_edit(lambda p: (lambda a, rest: a + b" " + str(int(rest.split(b"\n")[0]) + 1).encode() + b"\n" + rest.split(b"\n", 1)[1])(*p.split(b" ", 1))))
    dmg("damaged-tree-trailing", "tree-valid", "extension", "tree-valid with a second root node after the TREE tree",
        tree_edit(lambda p: p + b"\0-1 0\n"))
    dmg("damaged-tree-short-id", "tree-invalidated", "extension", "tree-invalidated whose TREE ends 5 bytes into the last tree id",
        tree_edit(lambda p: p[:-15]))
    dmg("damaged-reuc-mode", "reuc", "extension", "reuc with a resolve-undo mode that is not octal ('100648')",
        lambda s: with_payload(s, "REUC", lambda p: p.replace(b"100644\0", b"100648\0", 1)))
    dmg("damaged-reuc-short", "reuc-sha256", "extension", "reuc-sha256 whose REUC ends 10 bytes into a 32-byte id",
        lambda s: with_payload(s, "REUC", lambda p: p[:-22]))
    dmg("damaged-untr-short", "untr", "extension", "untr whose UNTR payload lost its last 30 bytes",
        lambda s: with_payload(s, "UNTR", lambda p: p[:-31] + b"\0"))
    dmg("damaged-untr-no-nul", "untr-uall", "extension", "untr-uall whose UNTR payload does not end in NUL",
        lambda s: with_payload(s, "UNTR", lambda p: p[:-1] + b"x"))
    dmg("damaged-fsmn-version", "fsmn", "extension", "fsmn with FSMN version 3",
        lambda s: with_payload(s, "FSMN", lambda p: struct.pack(">I", 3) + p[4:]))
    dmg("damaged-fsmn-bitmap-size", "fsmn", "extension", "fsmn whose FSMN bitmap claims 1000 bits for 5 entries (git 2.39 stops with BUG())",
        lambda s: with_payload(s, "FSMN", lambda p: (lambda z: p[:z + 5] + struct.pack(">I", 1000) + p[z + 9:])(p.index(b"\0", 4))))
    dmg("damaged-ieot-version", "sha256-eoie-ieot", "extension", "sha256-eoie-ieot with IEOT version 2",
        lambda s: with_payload(s, "IEOT", lambda p: struct.pack(">I", 2) + p[4:]))
    dmg("damaged-ieot-size", "eoie-ieot-v4", "extension", "eoie-ieot-v4 whose IEOT payload lost 4 bytes (not 4 + 8k)",
        lambda s: with_payload(s, "IEOT", lambda p: p[:-4]))
    dmg("damaged-eoie-size", "eoie-only", "extension", "eoie-only whose EOIE payload has one byte more than 4 + 20",
        lambda s: with_payload(s, "EOIE", lambda p: p + b"\0"))
    dmg("damaged-link-ewah", "split", "extension", "split whose link delete bitmap claims 1000 words",
        lambda s: with_payload(s, "link", lambda p: p[:24] + struct.pack(">I", 1000) + p[28:]))

    # --------------------------------------------------------------------- split
    def relink(src, oid_hex):
        return with_payload(src, "link", lambda p: bytes.fromhex(oid_hex) + p[HASHLEN[src["fmt"]]:])
    dmg("damaged-split-missing-shared", "split", "split", "split whose link names a shared index that does not exist",
        lambda s: (relink(s, "00" * 19 + "01"), None, None))
    def wrong_shared(s):
        other = S["split-fresh"]
        # the split-fresh shared index under the name split's link expects
        return s["data"], s["shared_name"], other["shared"]
    dmg("damaged-split-wrong-shared", "split", "split", "split given another repository's shared index under the name its link expects (its checksum is not the link's id)",
        wrong_shared)
    def set_bits(src, which, bits):
        fmt = src["fmt"]
        hl = HASHLEN[fmt]
        def f(p):
            def ew(bs):
                size = (max(bs) + 1) if bs else 0
                nwords = (size + 63) // 64
                words = [0] * nwords
                for bit in bs:
                    words[bit // 64] |= 1 << (bit % 64)
                # one run-length word with every word literal
                rlw = nwords << 33
                ws = [rlw] + words
                return struct.pack(">II", size, len(ws)) + b"".join(struct.pack(">Q", w) for w in ws) + struct.pack(">I", 0)
            d, q = ewah(p, hl, len(p), "delete")
            r, q2 = ewah(p, q, len(p), "replace")
            dd = ew(bits) if which == "delete" else p[hl:q]
            rr = ew(bits) if which == "replace" else p[q:q2]
            return p[:hl] + dd + rr
        return with_payload(src, "link", f)
    dmg("damaged-split-replace-past-end", "split", "split", "split whose replace bitmap names shared entry 40 (the shared index has 12)",
        lambda s: set_bits(s, "replace", [40]))
    dmg("damaged-split-delete-past-end", "split", "split", "split whose delete bitmap names shared entry 64 (the shared index has 12)",
        lambda s: set_bits(s, "delete", [3, 64]))
    dmg("damaged-split-replace-named", "split", "split", "split whose replace bitmap names one shared entry more than the split file has nameless entries for",
        lambda s: set_bits(s, "replace", [1, 2, 3]))


def cmd_build(a):
    B = Builder(a)
    if os.path.isdir(B.cases_dir):
        shutil.rmtree(B.cases_dir)
    os.makedirs(B.cases_dir)
    rows = [l.rstrip("\n").split("\t") for l in open(a.cases, encoding="utf-8") if l.strip()]
    rows.sort(key=lambda r: r[0])
    for name, desc, cwd, opts in rows:
        print("written", name, file=sys.stderr)
        B.written(name, desc, cwd, opts)
    build_damage(B)
    if a.foreign:
        root = os.path.abspath(a.foreign)
        for source in json.load(open(os.path.join(root, "sources.json")))["sources"]:
            for entry in source["cases"]:
                print("foreign", entry["name"], file=sys.stderr)
                B.foreign(root, source, entry)
    kinds = {}
    for c in B.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    manifest = {
        "corpus": "git-scalpel index conformance corpus",
        "formatVersion": 1,
        "generatedBy": "conformance/make-corpus.sh (conformance/tools/corpus.py)",
        "gitVersion": B.git_version,
        "pathEncoding": "hex",
        "classes": CLASS_DOCS,
        "counts": kinds,
        "cases": B.cases,
    }
    write_json(os.path.join(B.out, "manifest.json"), manifest, flat_at=2)
    print("cases: %d (%s)" % (len(B.cases), ", ".join("%s %d" % kv for kv in sorted(kinds.items()))), file=sys.stderr)


CLASS_DOCS = {
    "truncated": "the file ends before something it declares: shorter than a header and trailer, an entry or its path runs past the entries, more entries than fit, an extension header or size runs past the end",
    "signature": "the first four bytes are not DIRC",
    "version": "the version is not 2, 3 or 4",
    "checksum": "the trailer is neither all zeros (index.skipHash) nor the hash of everything before it",
    "entry": "an entry is malformed: extended flag bits git does not define, a v4 prefix strip longer than the previous path, an empty path outside a split index",
    "order": "entries are not sorted by path bytes then stage, a path appears twice at one stage, or a stage-0 entry sits beside stages 1-3 of its path (read-cache.c check_ce_order: git fsck refuses; ordinary git commands read it)",
    "extension": "a known extension's payload is malformed (TREE, REUC, UNTR, FSMN, EOIE, IEOT, link bitmaps), or the FSMN bitmap covers more entries than the index has",
    "unknown-extension": "an extension whose signature starts with a lowercase letter (required) that the reader does not understand",
    "split": "a split index and its shared index do not fit: the shared index is missing or its checksum is not the link's id, or a bitmap names a shared entry that does not exist, or replaced entries do not match the replace bitmap",
}


# ===================================================================== check
def strip_info(idx):
    """The answer without informative fields (extension offset and size)."""
    out = dict(idx)
    out["extensions"] = [{k: v for k, v in x.items() if k not in ("offset", "size")} for x in idx["extensions"]]
    return out


def schema_validators(root):
    """The answers and manifest schemas, when the jsonschema package (4.18+) is installed; else None."""
    try:
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
    except ImportError:
        return None
    a = json.load(open(os.path.join(root, "schema", "answers.schema.json")))
    m = json.load(open(os.path.join(root, "schema", "manifest.schema.json")))
    reg = Registry().with_resources([(a["$id"], Resource.from_contents(a)), (m["$id"], Resource.from_contents(m))])
    return Draft202012Validator(a, registry=reg), Draft202012Validator(m, registry=reg)


def cmd_check(a):
    root = a.dir or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    bad = 0
    n = 0
    schemas = schema_validators(root)
    if schemas:
        for e in schemas[1].iter_errors(manifest):
            bad += 1
            print("SCHEMA manifest.json:", e.message)
    for c in manifest["cases"]:
        if a.cases and c["name"] not in a.cases:
            continue
        n += 1
        d = os.path.join(root, "cases", c["name"])
        answers = json.load(open(os.path.join(d, "answers.json")))
        if schemas:
            for e in schemas[0].iter_errors(answers):
                bad += 1
                print("SCHEMA %s:" % c["name"], e.message)
        data, shared = read_case_bytes(d, answers)
        got = read_result(data, answers["objectFormat"], shared)
        if answers["result"] == "error":
            ok = got["result"] == "error" and got["error"]["class"] == answers["error"]["class"]
        else:
            ok = got["result"] == "index" and strip_info(got["index"]) == strip_info(answers["index"])
        if not ok:
            bad += 1
            print("FAIL", c["name"])
    print("%d cases, %d pass, %d fail%s" % (n, n - bad, bad, "" if schemas else " (answers not checked against the JSON schemas: pip install jsonschema)"))
    return 1 if bad else 0


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--cases", required=True)
    b.add_argument("--commands", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--git-version", required=True)
    b.add_argument("--tmp", required=True)
    b.add_argument("--foreign", help="a folder with sources.json: fixtures of other projects to add as 'foreign' cases")
    c = sub.add_parser("check")
    c.add_argument("dir", nargs="?")
    c.add_argument("cases", nargs="*")
    r = sub.add_parser("read")
    r.add_argument("index")
    r.add_argument("format", choices=["sha1", "sha256"])
    r.add_argument("shared", nargs="?")
    a = ap.parse_args(argv[1:])
    if a.cmd == "build":
        cmd_build(a)
        return 0
    if a.cmd == "check":
        return cmd_check(a)
    shared = open(a.shared, "rb").read() if a.shared else None
    print(json.dumps(read_result(open(a.index, "rb").read(), a.format, shared), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env bash
# Rebuild the conformance corpus (conformance/cases/, conformance/manifest.json) from scratch.
#
#   bash conformance/make-corpus.sh          (from the repository root; KEEP_TMP=1 keeps the repositories)
#
# Every "written" case is an index file the real git CLI wrote in a repository this script builds
# (the recipes below); nothing edits those bytes. Then conformance/tools/corpus.py — a reader of
# its own (Python standard library only, it shares no code with git-scalpel) — copies each index,
# records what git prints about it (`git ls-files -s --debug`, `--resolve-undo`, `git fsck`),
# parses every entry and extension into answers.json and checks the parse against git's listings;
# it then derives the "derived" cases (valid files git itself cannot write here) and the "damaged"
# cases from written ones, each with the error class a reader must report and git's own verdict,
# and adds the "foreign" cases: other projects' fixtures from foreign/ (sources.json), byte for byte.
#
# Needs: git, coreutils, python3 (3.8+).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOL="$SCRIPT_DIR/tools/corpus.py"

# ---------------------------------------------------------------- environment
# Nothing from the caller's git environment or configuration may leak in.
for v in $(compgen -e); do
  case $v in GIT_*) unset "$v" ;; esac
done
export LC_ALL=C TZ=UTC
umask 022
ulimit -c 0 # git 2.39 stops with BUG() (abort) on one damaged case: no core file

# REUSE=DIR: the repositories a KEEP_TMP=1 run left in DIR (only corpus.py runs again)
if [[ -n ${REUSE:-} ]]; then
  TMP=$REUSE
  KEEP_TMP=1
  rm -rf "$TMP/derived"
else
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/git-scalpel-corpus.XXXXXX")
fi
cleanup() { if [[ ${KEEP_TMP:-} == 1 ]]; then echo "kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT

WORK="$TMP/repos"
CMDS="$TMP/cmds"
LOGS="$TMP/logs"
mkdir -p "$WORK" "$CMDS" "$LOGS" "$TMP/home"
cd "$TMP" # never run anything inside the caller's repository

export HOME="$TMP/home"
export XDG_CONFIG_HOME="$TMP/home/.config"
export GIT_CONFIG_NOSYSTEM=1
export GIT_CEILING_DIRECTORIES="$TMP"
export GIT_AUTHOR_NAME="Corpus Author" GIT_AUTHOR_EMAIL="author@example.com"
export GIT_COMMITTER_NAME="Corpus Committer" GIT_COMMITTER_EMAIL="committer@example.com"
export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
export GIT_EDITOR=true GIT_PAGER=cat PAGER=cat GIT_TERMINAL_PROMPT=0

cat >"$HOME/.gitconfig" <<'EOF'
[user]
	name = Corpus Author
	email = author@example.com
[init]
	defaultBranch = main
[core]
	autocrlf = false
	pager = cat
[gc]
	auto = 0
[commit]
	gpgSign = false
[merge]
	conflictStyle = merge
[color]
	ui = false
[advice]
	detachedHead = false
	addEmptyPathspec = false
[protocol "file"]
	allow = always
EOF

GIT_VERSION=$(git --version)
echo "Using $GIT_VERSION"

# ------------------------------------------------------------------- helpers
NAME=""
CMDLOG=""
CASES="$TMP/cases.tsv" # name, description, worktree, options (written by finish)
[[ -n ${REUSE:-} ]] || : >"$CASES"
DESC=""

# Log a command (shell-quoted with %q, so odd bytes stay ASCII) and run it.
log_cmd() { local s; s=$(printf '%q ' "$@"); printf '%s\n' "${s% }" >>"$CMDLOG"; }
g() { log_cmd git "$@"; git "$@"; }
note() { printf '# %s\n' "$*" >>"$CMDLOG"; }
# mkf PATH [CONTENT]: create a file (and its directories) without git.
mkf() {
  local p=$1 c=${2-}
  [[ $# -ge 2 ]] || c="content of $p"
  mkdir -p -- "$(dirname -- "$p")"
  printf '%s\n' "$c" >"$p"
  printf '# write file %s\n' "$(printf '%q' "$p")" >>"$CMDLOG"
}
mkx() { mkf "$@"; chmod +x "$1"; log_cmd chmod +x "$1"; }
mkl() { ln -s "$1" "$2"; log_cmd ln -s "$1" "$2"; }

begin() {
  NAME=$1
  DESC=$2
  CMDLOG="$CMDS/$NAME"
  : >"$CMDLOG"
  mkdir -p "$WORK/$NAME/repo"
  cd "$WORK/$NAME/repo"
}

# finish VERSION EXTS [--sparse]: the index of the repository (or linked worktree) we are in is
# the case. VERSION and EXTS (comma-separated, file order) are what the recipe means git to write;
# corpus.py refuses the case when git wrote anything else.
finish() {
  local opts="version=$1;extensions=$2"
  shift 2
  while (($#)); do
    case $1 in --sparse) opts+=";sparse" ;; esac
    shift
  done
  printf '%s\t%s\t%s\t%s\n' "$NAME" "$DESC" "$PWD" "$opts" >>"$CASES"
}

# A base commit plus two branches that conflict in four ways.
#   both.txt    content conflict              -> stages 1, 2, 3
#   addadd.txt  added differently on both     -> stages 2, 3
#   moddel.txt  modified ours, deleted theirs -> stages 1, 2
#   delmod.txt  deleted ours, modified theirs -> stages 1, 3
make_conflict() {
  mkf both.txt $'line 1\nline 2\nline 3'
  mkf moddel.txt 'modify/delete base'
  mkf delmod.txt 'delete/modify base'
  mkf clean/keep.txt 'untouched'
  mkf clean/merged.txt $'a\nb\nc\nd\ne\nf\ng'
  g add .
  g commit -q -m base
  g checkout -q -b side
  mkf both.txt $'line 1\nline 2 (side)\nline 3'
  mkf addadd.txt 'added on side'
  g rm -q moddel.txt
  mkf delmod.txt 'delete/modify: modified on side'
  mkf clean/merged.txt $'a\nb\nc\nd\ne\nf\ng (side)'
  g add .
  g commit -q -m side
  g checkout -q main
  mkf both.txt $'line 1\nline 2 (main)\nline 3'
  mkf addadd.txt 'added on main'
  mkf moddel.txt 'modify/delete: modified on main'
  g rm -q delmod.txt
  mkf clean/merged.txt $'a (main)\nb\nc\nd\ne\nf\ng'
  g add .
  g commit -q -m main
  if g merge -q --no-edit side; then
    echo "expected the merge to conflict" >&2
    return 1
  fi
}

resolve_conflict() {
  mkf both.txt $'line 1\nline 2 (resolved)\nline 3'
  mkf addadd.txt 'added on both, resolved'
  g add both.txt addadd.txt moddel.txt
  g rm -q delmod.txt
}

make_tree() {
  mkf a.txt; mkf b/c.txt; mkf b/d/e.txt; mkf b/d/f/g.txt; mkf b/h.txt; mkf i/j/k.txt; mkf z.txt
}

make_odd_names() {
  mkf $'\xff\xfe.bin'
  mkf $'caf\xe9.latin1'
  mkf $'caf\xc3\xa9.nfc'
  mkf $'cafe\xcc\x81.nfd'
  mkf $'new\nline'
  mkf $'tab\there'
  mkf 'quote"d'
  mkf 'back\slash'
  mkf 'with  two spaces '
  mkf '-leading-dash'
  mkf $'emoji-\xf0\x9f\x98\x80.txt'
  mkf $'ctrl-\x01-char'
  mkf '#hash [bracket] *star? $dollar'
  mkf $'dir-\xff/inner.txt'
  mkf a-b; mkf a.b; mkf a/b; mkf a0
}

make_untracked() {
  # untracked files and directories, ignored ones, and a nested .gitignore
  mkf notes.txt; mkf untracked-dir/a.txt; mkf untracked-dir/sub/b.txt
  mkf src/new.c; mkf src/lib/new.h; mkf debug.log; mkf src/trace.log; mkf build/out.o
  mkf src/.gitignore '*.tmp'; mkf src/x.tmp
}

fsmonitor_hook() {
  # query-fsmonitor hook, protocol version 2: prints a token, NUL, then NUL-terminated changed paths
  cat >.git/fsmonitor-hook <<EOF
#!/bin/sh
printf '$1\\0'
printf 'modified.txt\\0'
printf 'dir/b.txt\\0'
EOF
  chmod +x .git/fsmonitor-hook
  note "write .git/fsmonitor-hook: prints '$1\\0modified.txt\\0dir/b.txt\\0'; chmod +x"
  g config core.fsmonitor .git/fsmonitor-hook
  g config core.fsmonitorHookVersion 2
}

long_paths() {
  # Paths this long cannot be lstat()ed (PATH_MAX is 4096 on Linux): added with --cacheinfo.
  local blob comp dir="" i p len
  blob=$(printf 'deep\n' | git hash-object -w --stdin)
  log_cmd git hash-object -w --stdin
  note "blob $blob = 'deep\\n'"
  comp=$(printf 'd%.0s' $(seq 199))
  for i in $(seq -w 1 20); do dir+="${i}${comp:2}/"; done # 20 components of 199 bytes
  for len in 4094 4095 4096 4300; do
    p="${dir}$(printf 'n%.0s' $(seq $((len - ${#dir} - 4))))$(printf '%04d' "$len")"
    [[ ${#p} -eq $len ]] || { echo "bad long path length" >&2; return 1; }
    git update-index --add --cacheinfo "100644,$blob,$p"
  done
  note "DIR = 20 components of 199 bytes each ('01ddd...d/' .. '20ddd...d/'), 4000 bytes"
  note "for LEN in 4094 4095 4096 4300: git update-index --add --cacheinfo 100644,$blob,\$DIR<n...n><LEN as 4 digits> (path exactly LEN bytes)"
}

many_files() { # many_files DIRS FILES: DIRS x FILES files dNN/fNN, each holding its own number
  local d f
  for d in $(seq -w 0 $(($1 - 1))); do
    mkdir -p "d$d"
    for f in $(seq -w 0 $(($2 - 1))); do printf '%s\n' "$d$f" >"d$d/f$f"; done
  done
  note "write $(($1 * $2)) files d*/f*, each holding its own number"
}

# ------------------------------------------------------------ versions, flags
c_v2_basic() {
  begin v2-basic "v2: nested directories, an executable, a symlink; committed, so TREE is valid"
  g init -q
  mkf README.md '# corpus'; mkf src/main.c 'int main(void) { return 0; }'; mkf src/lib/util.c; mkf src/lib/util.h
  mkf docs/guide/intro.md; mkx run.sh $'#!/bin/sh\necho hi'; mkl src/main.c link-to-main
  g add .
  g commit -q -m v2-basic
  finish 2 TREE
}
c_no_commit() {
  begin no-commit "v2 with no extension: files staged in a repository that has no commit yet"
  g init -q
  mkf a.txt; mkf dir/b.txt; mkx dir/run.sh; mkf z.txt
  g add .
  finish 2 ""
}
c_v3_flags() {
  begin v3-flags "v3: intent-to-add (git add -N) and skip-worktree entries"
  g init -q
  mkf a.txt; mkf dir/b.txt; mkf dir/c.txt; mkf dir/sub/d.txt; mkf z.txt
  g add .
  g commit -q -m base
  g update-index --skip-worktree dir/c.txt z.txt
  mkf new-ita.txt; mkf dir/sub/ita2.txt
  g add -N new-ita.txt dir/sub/ita2.txt
  finish 3 TREE
}
c_v3_ita_only() {
  begin v3-ita-only "v3: only intent-to-add entries, in a repository with no commit (no extension)"
  g init -q
  mkf a.txt; mkf b/c.txt
  g add -N a.txt b/c.txt
  finish 3 ""
}
c_v3_all_flags() {
  begin v3-all-flags "v3: assume-unchanged, skip-worktree and intent-to-add, and an entry with both assume-unchanged and skip-worktree"
  g init -q
  mkf a.txt; mkf b.txt; mkf c.txt; mkf d/e.txt
  g add .
  g commit -q -m base
  g update-index --assume-unchanged a.txt c.txt
  g update-index --skip-worktree b.txt c.txt
  mkf ita.txt
  g add -N ita.txt
  finish 3 TREE
}
c_v4_basic() {
  begin v4-basic "v4: ~50 paths sharing long prefixes, so prefix compression matters"
  g init -q
  local c f
  for c in button button-group card card-header dialog dialog-footer menu menu-item tabs; do
    for f in index.ts index.test.ts style.css; do mkf "src/components/$c/$f"; done
  done
  for f in a b c d e f g h; do mkf "src/utils/string/$f.ts"; mkf "src/utils/strings/$f.ts"; done
  for f in one two three four five; do mkf "test/unit/$f.spec.ts"; done
  mkf src/index.ts; mkf src/index.d.ts; mkf srcmap.json
  g add .
  g commit -q -m v4-basic
  g update-index --index-version 4
  finish 4 TREE
}
c_v4_flags() {
  begin v4-flags "v4 with extended flags: intent-to-add, skip-worktree and assume-unchanged"
  g init -q
  mkf lib/alpha.txt; mkf lib/beta.txt; mkf lib/gamma.txt; mkf lib/deep/delta.txt; mkf top.txt
  g add .
  g commit -q -m base
  g update-index --index-version 4
  g update-index --skip-worktree lib/beta.txt
  g update-index --assume-unchanged lib/gamma.txt top.txt
  mkf lib/deep/ita.txt; mkf lib/ita-top.txt
  g add -N lib/deep/ita.txt lib/ita-top.txt
  finish 4 TREE
}
c_v4_neighbours() {
  begin v4-neighbours "v4: sort-order neighbours (a-b, a.b, a/b, a0, ab) where the prefix to strip is long, zero and whole"
  g init -q
  mkf a-b; mkf a.b; mkf a/b
  mkf a0; mkf ab; mkf abc/def/ghi/jkl.txt; mkf abc/def/ghi/jkm.txt; mkf abc/x; mkf b
  g add .
  g update-index --index-version 4
  finish 4 ""
}
c_symlinks_exec() {
  begin symlinks-exec "modes: regular, executable, symlinks (to a file, a directory, nothing) in v2"
  g init -q
  mkf plain.txt; mkx tool.sh $'#!/bin/sh\ntrue'; mkx bin/run $'#!/bin/sh\ntrue'; mkf dir/file.txt
  mkl plain.txt link-file; mkl dir link-dir; mkl does/not/exist link-dangling; mkl ../outside dir/link-up
  g add .
  g commit -q -m modes
  finish 2 TREE
}
c_symlinks_exec_v4() {
  begin symlinks-exec-v4 "the same modes in a v4 index"
  g init -q
  mkf plain.txt; mkx tool.sh $'#!/bin/sh\ntrue'; mkx bin/run $'#!/bin/sh\ntrue'; mkf dir/file.txt
  mkl plain.txt link-file; mkl dir link-dir; mkl does/not/exist link-dangling; mkl ../outside dir/link-up
  g add .
  g commit -q -m modes
  g update-index --index-version 4
  finish 4 TREE
}
c_assume_unchanged() {
  begin assume-unchanged "v2 with assume-unchanged entries (the assume-valid bit 0x8000 needs no extended word)"
  g init -q
  mkf a.txt; mkf dir/b.txt; mkf dir/c.txt; mkf z.txt
  g add .
  g commit -q -m base
  g update-index --assume-unchanged a.txt dir/c.txt
  finish 2 TREE
}
c_empty() {
  begin empty "an index with zero entries (add, then rm --cached)"
  g init -q
  mkf a.txt
  g add a.txt
  g rm -q --cached a.txt
  finish 2 ""
}
c_empty_v4() {
  begin empty-v4 "a v4 index with zero entries"
  g init -q
  g update-index --index-version 4
  mkf a.txt
  g add a.txt
  g rm -q --cached a.txt
  finish 4 ""
}
c_racy() {
  begin racy "a racily clean entry smudged by git: a.txt changed after git add without a stat change git can see, so the next index write set its cached size to 0"
  g init -q
  g config core.trustctime false
  mkf a.txt 'aaaa'; mkf b.txt 'bbbb'
  touch -d '2099-01-01 00:00:00' a.txt; log_cmd touch -d '2099-01-01 00:00:00' a.txt
  g add a.txt b.txt
  mkf a.txt 'xxxx'
  touch -d '2099-01-01 00:00:00' a.txt; log_cmd touch -d '2099-01-01 00:00:00' a.txt
  local blob
  blob=$(git hash-object -w b.txt)
  log_cmd git hash-object -w b.txt
  # any index write: a.txt is racy (its mtime is after the index file's), its stat data still
  # matches and its content does not: ce_smudge_racily_clean_entry sets its size to 0
  g update-index --add --cacheinfo "100644,$blob,c.txt"
  finish 2 ""
}

# ------------------------------------------------------------------- TREE
c_tree_valid() {
  begin tree-valid "after a commit: every TREE node valid"
  g init -q
  make_tree
  g add .
  g commit -q -m tree-valid
  finish 2 TREE
}
c_tree_invalidated() {
  begin tree-invalidated "a deep file re-added after the commit: its ancestors' TREE nodes are invalid (-1)"
  g init -q
  make_tree
  g add .
  g commit -q -m tree
  mkf b/d/f/g.txt 'modified deep file'
  g add b/d/f/g.txt
  finish 2 TREE
}
c_tree_deep() {
  begin tree-deep "TREE of a 24-level directory chain and wide siblings, v4"
  g init -q
  local p="" i
  for i in $(seq -w 1 24); do p+="level$i/"; mkf "${p}file$i.txt"; done
  for i in $(seq -w 1 12); do mkf "wide/w$i/x.txt"; done
  g add .
  g commit -q -m deep
  g update-index --index-version 4
  mkf level01/level02/new.txt
  g add level01/level02/new.txt
  finish 4 TREE
}
c_tree_root_only() {
  begin tree-root-only "write-tree of a flat repository (a TREE with only a root node), nothing committed"
  g init -q
  mkf a.txt; mkf b.txt; mkf c.txt
  g add .
  g write-tree
  finish 2 TREE
}

# -------------------------------------------------------- conflicts and REUC
c_conflict() {
  begin conflict "unresolved merge: content conflict (stages 1/2/3), add/add (2/3), modify/delete (1/2), delete/modify (1/3)"
  g init -q
  make_conflict
  finish 2 TREE
}
c_conflict_v4() {
  begin conflict-v4 "the unresolved merge in a v4 index (prefix compression across stages of one path)"
  g init -q
  g update-index --index-version 4
  make_conflict
  finish 4 TREE
}
c_conflict_sha256() {
  begin conflict-sha256 "the unresolved merge in a SHA-256 repository"
  g init -q --object-format=sha256
  make_conflict
  finish 2 TREE
}
c_conflict_exec() {
  begin conflict-modes "a conflict where the stages differ in mode (executable on one side, symlink on the other)"
  g init -q
  mkf tool 'base'
  g add .
  g commit -q -m base
  g checkout -q -b side
  chmod +x tool; log_cmd chmod +x tool
  mkf tool 'side'
  g add .
  g commit -q -m side
  g checkout -q main
  rm tool; log_cmd rm tool
  mkl target tool
  g add .
  g commit -q -m main
  if g merge -q --no-edit side; then echo "expected a conflict" >&2; return 1; fi
  finish 2 TREE
}
c_reuc() {
  begin reuc "the conflicts resolved (git add for three paths, git rm for delmod.txt): REUC keeps the stages"
  g init -q
  make_conflict
  resolve_conflict
  finish 2 TREE,REUC
}
c_reuc_v4() {
  begin reuc-v4 "resolve-undo records in a v4 index"
  g init -q
  g update-index --index-version 4
  make_conflict
  resolve_conflict
  finish 4 TREE,REUC
}
c_reuc_sha256() {
  begin reuc-sha256 "resolve-undo records in a SHA-256 repository (32-byte ids in REUC)"
  g init -q --object-format=sha256
  make_conflict
  resolve_conflict
  finish 2 TREE,REUC
}
c_reuc_partial() {
  begin reuc-partial "one path resolved, the others still in conflict: REUC beside stage entries"
  g init -q
  make_conflict
  mkf both.txt $'line 1\nline 2 (resolved)\nline 3'
  g add both.txt
  finish 2 TREE,REUC
}

# ---------------------------------------------------------------- untracked cache
c_untr() {
  begin untr "untracked cache filled by two git status runs (core.untrackedCache=true)"
  g init -q
  mkf .gitignore $'*.log\nbuild/'
  mkf src/main.c; mkf src/lib/util.c; mkf README.md
  g add .
  g commit -q -m base
  g config core.untrackedCache true
  g update-index --untracked-cache
  make_untracked
  sleep 1; log_cmd sleep 1
  g status --porcelain
  g status --porcelain
  finish 2 TREE,UNTR
}
c_untr_all() {
  begin untr-uall "untracked cache after git status -uall (every untracked directory recursed into)"
  g init -q
  mkf .gitignore $'*.log\nbuild/'
  mkf src/main.c; mkf README.md
  g add .
  g commit -q -m base
  g config core.untrackedCache true
  g config status.showUntrackedFiles all
  g update-index --untracked-cache
  make_untracked
  sleep 1; log_cmd sleep 1
  g status --porcelain
  g status --porcelain
  finish 2 TREE,UNTR
}
c_untr_excludes() {
  begin untr-excludes "untracked cache with .git/info/exclude and core.excludesFile present (their ids and stat data recorded)"
  g init -q
  mkf .gitignore '*.log'
  mkf src/main.c
  g add .
  g commit -q -m base
  mkf .git/info/exclude '*.bak'
  mkf "$HOME/global-ignore" '*.swp'
  g config core.excludesFile "$HOME/global-ignore"
  g config core.untrackedCache true
  g update-index --untracked-cache
  mkf a.bak; mkf b.swp; mkf c.txt; mkf src/d.log; mkf src/e.c
  sleep 1; log_cmd sleep 1
  g status --porcelain
  g status --porcelain
  finish 2 TREE,UNTR
}
c_untr_rootless() {
  begin untr-rootless "untracked cache switched on but never filled (no root directory block)"
  g init -q
  mkf a.txt
  g add .
  g commit -q -m base
  g update-index --untracked-cache
  finish 2 TREE,UNTR
}
c_untr_sha256() {
  begin untr-sha256 "untracked cache in a SHA-256 repository"
  g init -q --object-format=sha256
  mkf .gitignore '*.log'
  mkf src/main.c; mkf README.md
  g add .
  g commit -q -m base
  g config core.untrackedCache true
  g update-index --untracked-cache
  make_untracked
  sleep 1; log_cmd sleep 1
  g status --porcelain
  g status --porcelain
  finish 2 TREE,UNTR
}

# -------------------------------------------------------------------- FSMN
c_fsmn() {
  begin fsmn "fsmonitor extension (version 2) written through a query-fsmonitor hook"
  g init -q
  mkf a.txt; mkf dir/b.txt; mkf dir/c.txt; mkf modified.txt; mkf z.txt
  g add .
  g commit -q -m base
  fsmonitor_hook corpus-token-v2
  mkf modified.txt 'changed in the worktree, not staged'
  g status --porcelain
  g status --porcelain
  finish 2 TREE,FSMN
}
c_fsmn_v4() {
  begin fsmn-v4 "fsmonitor extension in a v4 index"
  g init -q
  mkf a.txt; mkf dir/b.txt; mkf dir/c.txt; mkf modified.txt; mkf z.txt
  g add .
  g commit -q -m base
  g update-index --index-version 4
  fsmonitor_hook corpus-token-v4
  mkf modified.txt 'changed in the worktree, not staged'
  g status --porcelain
  g status --porcelain
  finish 4 TREE,FSMN
}
c_fsmn_sha256() {
  begin fsmn-sha256 "fsmonitor extension in a SHA-256 repository"
  g init -q --object-format=sha256
  mkf a.txt; mkf dir/b.txt; mkf dir/c.txt; mkf modified.txt; mkf z.txt
  g add .
  g commit -q -m base
  fsmonitor_hook corpus-token-sha256
  mkf modified.txt 'changed in the worktree, not staged'
  g status --porcelain
  g status --porcelain
  finish 2 TREE,FSMN
}

# --------------------------------------------------------------- EOIE / IEOT
c_eoie_ieot() {
  begin eoie-ieot "200 entries with index.threads=4, recordEndOfIndexEntries and recordOffsetTable: IEOT (4 blocks) and EOIE"
  g init -q
  g config index.threads 4
  g config index.recordEndOfIndexEntries true
  g config index.recordOffsetTable true
  many_files 8 25
  g add .
  g commit -q -m eoie-ieot
  finish 2 IEOT,TREE,EOIE
}
c_eoie_ieot_v4() {
  begin eoie-ieot-v4 "IEOT and EOIE in a v4 index (git 2.39 prefix-compresses the first path of each IEOT block against the last of the block before)"
  g init -q
  g config index.threads 4
  g config index.recordEndOfIndexEntries true
  g config index.recordOffsetTable true
  g update-index --index-version 4
  many_files 4 25
  g add .
  g commit -q -m eoie-ieot-v4
  finish 4 IEOT,TREE,EOIE
}
c_eoie_only() {
  begin eoie-only "EOIE without IEOT (index.recordEndOfIndexEntries only)"
  g init -q
  g config index.recordEndOfIndexEntries true
  g config index.recordOffsetTable false
  mkf a.txt; mkf b/c.txt; mkf d.txt
  g add .
  g commit -q -m eoie
  finish 2 TREE,EOIE
}
c_sha256_eoie_ieot() {
  begin sha256-eoie-ieot "SHA-256 repository with IEOT and EOIE (EOIE body is 4+32 bytes; git 2.39's own reader expects 4+20 and ignores it)"
  g init -q --object-format=sha256
  g config index.threads 4
  g config index.recordEndOfIndexEntries true
  g config index.recordOffsetTable true
  many_files 4 10
  g add .
  g commit -q -m sha256-eoie-ieot
  finish 2 IEOT,TREE,EOIE
}

# ------------------------------------------------------------------- split
split_common() {
  g config splitIndex.maxPercentChange 100
  local i
  for i in 01 02 03 04 05 06 07 08 09 10; do mkf "f$i.txt"; done
  mkf dir/g1.txt; mkf dir/g2.txt
  # the clock moves on, so the base entries are not racily clean (a smudged entry is "replaced" too)
  sleep 1; log_cmd sleep 1
  g add .
  g commit -q -m base
  g update-index --split-index
  mkf f03.txt 'replaced after the split'
  g add f03.txt
  mkf dir/g2.txt 'replaced too'
  g add dir/g2.txt
  g rm -q f05.txt f08.txt
  mkf new.txt; mkf dir/new2.txt
  g add new.txt dir/new2.txt
}
c_split() {
  begin split "split index: link with replace and delete bitmaps, added entries, over one sharedindex file"
  g init -q
  split_common
  finish 2 link,TREE
}
c_split_fresh() {
  begin split-fresh "split index right after git update-index --split-index: every entry in the shared index, empty bitmaps"
  g init -q
  mkf a.txt; mkf b/c.txt
  g add .
  g commit -q -m base
  g update-index --split-index
  finish 2 link,TREE
}
c_split_v4() {
  begin split-v4 "split index in v4 (replaced entries have empty names: strip and suffix both zero)"
  g init -q
  g update-index --index-version 4
  split_common
  finish 4 link,TREE
}
c_split_sha256() {
  begin split-sha256 "split index in a SHA-256 repository (32-byte id in link)"
  g init -q --object-format=sha256
  split_common
  finish 2 link,TREE
}
c_split_flags() {
  begin split-flags "split index in v3: skip-worktree and intent-to-add entries, one skip-worktree entry replaced"
  g init -q
  g config splitIndex.maxPercentChange 100
  mkf a.txt; mkf b.txt; mkf c.txt; mkf d.txt
  sleep 1; log_cmd sleep 1
  g add .
  g commit -q -m base
  g update-index --split-index
  g update-index --skip-worktree b.txt
  mkf e.txt
  g add -N e.txt
  finish 3 link,TREE
}
c_kitchen_sink() {
  begin all-extensions "every extension git writes, together in git's order: IEOT, link, TREE, REUC, UNTR, FSMN, EOIE"
  g init -q
  g config index.threads 2
  g config index.recordEndOfIndexEntries true
  g config index.recordOffsetTable true
  make_conflict
  resolve_conflict
  g config core.untrackedCache true
  g update-index --untracked-cache
  mkf untracked.txt; mkf scratch/a.txt
  cat >.git/fsmonitor-hook <<'EOF'
#!/bin/sh
printf 'sink-token\0'
printf 'both.txt\0'
EOF
  chmod +x .git/fsmonitor-hook
  note "write .git/fsmonitor-hook: prints 'sink-token\\0both.txt\\0'; chmod +x"
  g config core.fsmonitor .git/fsmonitor-hook
  g config core.fsmonitorHookVersion 2
  sleep 1; log_cmd sleep 1
  g status --porcelain
  g status --porcelain
  # the split last (here git 2.39 writes the index whole again on a git add), then two entries
  # through --cacheinfo, so the split file holds enough entries of its own for two IEOT blocks
  g config splitIndex.maxPercentChange 100
  g update-index --split-index
  local blob
  blob=$(printf 'cached\n' | git hash-object -w --stdin)
  log_cmd git hash-object -w --stdin
  g update-index --add --cacheinfo "100644,$blob,cache1.txt"
  g update-index --add --cacheinfo "100644,$blob,clean/cache2.txt"
  finish 2 IEOT,link,TREE,REUC,UNTR,FSMN,EOIE
}

# ------------------------------------------------------------------- sparse
sparse_tree() {
  mkf top.txt; mkf dirA/a1.txt; mkf dirA/sub/a2.txt
  mkf dirB/b1.txt; mkf dirB/sub/b2.txt
  mkf dirC/c.txt; mkf dirC/in/c1.txt; mkf dirC/out/c2.txt; mkf dirC/deep/x/y.txt
  mkf dirD/d.txt
}
c_sparse() {
  begin sparse "sparse index (cone mode): dirB/, dirC/out/, dirC/deep/ and dirD/ are sparse directory entries (040000)"
  g init -q
  sparse_tree
  g add .
  g commit -q -m base
  g sparse-checkout init --cone --sparse-index
  g sparse-checkout set dirA dirC/in
  finish 3 TREE,sdir --sparse
}
c_sparse_v4() {
  begin sparse-v4 "sparse index in v4"
  g init -q
  sparse_tree
  g add .
  g commit -q -m base
  g update-index --index-version 4
  g sparse-checkout init --cone --sparse-index
  g sparse-checkout set dirA dirC/in
  finish 4 TREE,sdir --sparse
}
c_sparse_sha256() {
  begin sparse-sha256 "sparse index in a SHA-256 repository (sparse directory entries hold 32-byte tree ids)"
  g init -q --object-format=sha256
  sparse_tree
  g add .
  g commit -q -m base
  g sparse-checkout init --cone --sparse-index
  g sparse-checkout set dirA dirC/in
  finish 3 TREE,sdir --sparse
}
c_sparse_noncone() {
  begin skip-worktree-sparse "sparse checkout without a sparse index: files outside the cone are skip-worktree entries"
  g init -q
  sparse_tree
  g add .
  g commit -q -m base
  g sparse-checkout init --cone --no-sparse-index
  g sparse-checkout set dirA
  finish 3 TREE
}

# ------------------------------------------------------------------- SHA-256
c_sha256_v2() {
  begin sha256-v2 "SHA-256 repository, v2 index"
  g init -q --object-format=sha256
  mkf a.txt; mkf dir/b.txt; mkf dir/sub/c.txt; mkx z.sh $'#!/bin/sh\ntrue'
  g add .
  g commit -q -m sha256
  finish 2 TREE
}
c_sha256_v3() {
  begin sha256-v3 "SHA-256 repository, v3 index (skip-worktree and intent-to-add)"
  g init -q --object-format=sha256
  mkf a.txt; mkf dir/b.txt; mkf z.txt
  g add .
  g commit -q -m sha256
  g update-index --skip-worktree dir/b.txt
  mkf ita.txt
  g add -N ita.txt
  finish 3 TREE
}
c_sha256_v4() {
  begin sha256-v4 "SHA-256 repository, v4 index, one later staged change (TREE partly invalid)"
  g init -q --object-format=sha256
  mkf src/alpha.txt; mkf src/alphabet.txt; mkf src/beta/one.txt; mkf src/beta/two.txt; mkf zeta.txt
  g add .
  g commit -q -m sha256
  g update-index --index-version 4
  mkf src/beta/three.txt
  g add src/beta/three.txt
  finish 4 TREE
}
c_sha256_empty() {
  begin sha256-empty "an empty index in a SHA-256 repository (32-byte trailer)"
  g init -q --object-format=sha256
  mkf a.txt
  g add a.txt
  g rm -q --cached a.txt
  finish 2 ""
}
c_sha256_gitlink() {
  begin sha256-gitlink "gitlinks in a SHA-256 repository"
  g init -q --object-format=sha256
  mkf a.txt
  g add .
  g commit -q -m base
  local head
  head=$(git rev-parse HEAD)
  g update-index --add --cacheinfo "160000,$head,sub"
  g commit -q -m gitlink
  finish 2 TREE
}

# ---------------------------------------------------------- gitlinks, worktrees
c_gitlink() {
  begin gitlink "gitlink (160000) entries next to normal files, committed"
  g init -q
  mkf a.txt; mkf lib/b.txt; mkf z.txt
  g add .
  g commit -q -m base
  local head
  head=$(git rev-parse HEAD)
  g update-index --add --cacheinfo "160000,$head,sub"
  g update-index --add --cacheinfo "160000,0123456789abcdef0123456789abcdef01234567,lib/vendored"
  g commit -q -m gitlinks
  finish 2 TREE
}
c_submodule() {
  begin submodule "a real submodule (git submodule add of a local repository): .gitmodules and a gitlink, v4"
  mkdir ../sub && (cd ../sub && git init -q && mkf s.txt && git add . && git commit -q -m sub)
  note "make ../sub: a repository with one commit"
  g init -q
  mkf a.txt
  g add .
  g commit -q -m base
  g submodule add -q ../sub libs/sub
  g commit -q -m submodule
  g update-index --index-version 4
  finish 4 TREE
}
c_linked_worktree() {
  begin linked-worktree "the index of a linked worktree (.git/worktrees/wt/index) with a staged change and a new file"
  g init -q
  mkf a.txt; mkf dir/b.txt; mkf dir/c.txt
  g add .
  g commit -q -m base
  g worktree add -q ../wt
  cd ../wt; log_cmd cd ../wt
  mkf dir/b.txt 'changed in the linked worktree'
  mkf wt-only.txt
  g add dir/b.txt wt-only.txt
  finish 2 TREE
}

# --------------------------------------------------------------- path bytes
c_odd_names() {
  begin odd-names "paths as bytes: non-UTF-8, newline, tab, quote, backslash, spaces, leading dash, emoji, combining marks, sort-order neighbours"
  g init -q
  make_odd_names
  g add -- .
  g commit -q -m odd-names
  finish 2 TREE
}
c_odd_names_v4() {
  begin odd-names-v4 "the odd names in a v4 index"
  g init -q
  make_odd_names
  g add -- .
  g commit -q -m odd-names
  g update-index --index-version 4
  finish 4 TREE
}
c_odd_names_sha256() {
  begin odd-names-sha256 "the odd names in a SHA-256 repository"
  g init -q --object-format=sha256
  make_odd_names
  g add -- .
  g commit -q -m odd-names
  finish 2 TREE
}
c_long_path() {
  begin long-path "paths of 4094, 4095, 4096 and 4300 bytes (the name-length field is capped at 0xFFF), v2"
  g init -q
  mkf short.txt; mkf zz/after.txt
  g add .
  long_paths
  g commit -q -m long-path
  finish 2 TREE
}
c_long_path_v4() {
  begin long-path-v4 "the long paths in a v4 index"
  g init -q
  mkf short.txt; mkf zz/after.txt
  g add .
  long_paths
  g commit -q -m long-path
  g update-index --index-version 4
  finish 4 TREE
}
c_long_path_sha256() {
  begin long-path-sha256 "the long paths in a SHA-256 repository, v3 (one entry skip-worktree)"
  g init -q --object-format=sha256
  mkf short.txt; mkf zz/after.txt
  g add .
  long_paths
  g commit -q -m long-path
  g update-index --skip-worktree short.txt
  finish 3 TREE
}
c_name_lengths() {
  begin name-lengths "names of every length 1..24 (each padding length 1..8 of v2 entries) and 0xFFE/0xFFF bytes"
  g init -q
  local i p
  for i in $(seq 1 24); do p=$(printf 'x%.0s' $(seq "$i")); mkf "n/$p"; done
  local blob
  blob=$(printf 'n\n' | git hash-object -w --stdin)
  log_cmd git hash-object -w --stdin
  p=$(printf 'y%.0s' $(seq 4094)); git update-index --add --cacheinfo "100644,$blob,$p"
  p=$(printf 'z%.0s' $(seq 4095)); git update-index --add --cacheinfo "100644,$blob,$p"
  note "git update-index --add --cacheinfo 100644,$blob,<4094 x y> and <4095 x z>"
  g add .
  finish 2 ""
}

# ---------------------------------------------------------------------- run
run() {
  local fn=$1 log="$LOGS/$1.log" rc
  set +e
  (
    set -e
    "$fn"
  ) >"$log" 2>&1
  rc=$?
  set -e
  if ((rc != 0)); then
    echo "FAILED: $fn (log follows)" >&2
    cat "$log" >&2
    exit 1
  fi
}

# each recipe runs in a subshell: finish() appends to $CASES, which lives outside it
if [[ -z ${REUSE:-} ]]; then
  for fn in $(declare -F | awk '{print $3}' | grep '^c_'); do
    run "$fn"
  done
fi

python3 "$TOOL" build --cases "$CASES" --commands "$CMDS" --out "$SCRIPT_DIR" --git-version "$GIT_VERSION" --tmp "$TMP/derived" \
  --foreign "$SCRIPT_DIR/foreign"

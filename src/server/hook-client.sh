# git-scalpel's hook client (dist/git-scalpel-hook.sh, written by scripts/bundle-cli.mjs from
# src/server/hook-client.sh): what `install` writes as the hook command, run as
#
#   sh <this file> hook <harness> [--fail-open]
#
# with one hook event on stdin. It sends the event to the warm server of this user and build
# (src/server/server.ts) over its Unix socket with curl, and relays the answer in the harness's
# protocol: stdout, stderr and the exit code exactly as `git-scalpel hook <harness>` in a process
# gives them (exit 2 blocks the tool call). Whenever that cannot be done — no socket, no curl, a
# directory or socket that is not this user's, a socket path too long to bind, curl failing (no
# server, refused, reset mid-call, timeout), an answer that is no frame of ours, a server of
# another build — it runs that very process instead, with the same stdin bytes (`exec node
# git-scalpel.cjs hook <harness> ...`, the CLI beside this file), which also starts a server in the
# background for the next event. So protection never fails open: a capture that should block still
# blocks. Only shell builtins run before curl (`[`, `command -v`, `case`), and `cat` to keep the event.
#
# A reset mid-call may come after the server acted: the process path then handles the event a
# second time, which the engine takes as a repeat (the first capture of a path in a turn wins).

b='@BUILD@'
h=${0%/*}
case $0 in */*) ;; *) h=. ;; esac

# the server's directory (src/server/place.ts serverDir), only the user's own
d=
case ${XDG_RUNTIME_DIR-} in
/*) d=${XDG_RUNTIME_DIR%/}/git-scalpel ;;
*) case ${HOME-} in /*) d=${HOME%/}/.cache/git-scalpel ;; esac ;;
esac
s=$d/$b.sock

# what the server is sent: the arguments as URL path segments (only the words install writes)
u=
ok=1
for a in "$@"; do
  case $a in '' | *[!A-Za-z0-9_-]*) ok= ;; esac
  u=$u/$a
done
[ "${1-}" = hook ] || ok=

# try the server only when the directory and socket are this user's and the path can be bound;
# `start`: a server is worth starting after the process path answered (curl is there, the place is ours)
start=
f=
if [ -n "$ok" ] && [ -n "$d" ] && [ "${#s}" -le 103 ] && command -v curl >/dev/null 2>&1; then
  if [ ! -e "$d" ] || { [ -d "$d" ] && [ -O "$d" ] && [ ! -h "$d" ]; }; then start=1; fi
  if [ -n "$start" ] && [ -S "$s" ] && [ -O "$s" ]; then
    umask 077
    f=$d/in.$$
    if ! cat >"$f"; then
      rm -f "$f"
      printf '%s\n' "git-scalpel hook: could not keep the event in $d to send it, so the tool call is blocked" >&2
      exit 2
    fi
    # `x-scalpel-pid`: the answer's stdout and stderr come as files `out.$$` and `err.$$` beside
    # the event (when not empty), and the server removes `in.$$` once it has answered, so an
    # event with no output costs no process after curl
    r=$(curl -q -s --noproxy '*' --unix-socket "$s" --connect-timeout 2 --max-time 20 \
      -H 'Expect:' -H 'Content-Type: application/octet-stream' -H "x-scalpel-pid: $$" \
      ${HOME+-H} ${HOME+"x-scalpel-home: $HOME"} \
      ${XDG_CONFIG_HOME+-H} ${XDG_CONFIG_HOME+"x-scalpel-xdg-config-home: $XDG_CONFIG_HOME"} \
      --data-binary @"$f" -o /dev/null -D - -w '
scalpel-frame %{http_code}' "http://git-scalpel/v1/$b$u")
    if [ $? -eq 0 ]; then
      # the frame: status 200 + exit code, this build's header, `x-scalpel-out: N`, `x-scalpel-err: N`
      st=${r##*scalpel-frame }
      no=
      ne=
      case $r in *"x-scalpel-build: $b"*)
        case $r in *'x-scalpel-out: '[0-9]*)
          no=${r#*x-scalpel-out: }
          no=${no%%[!0-9]*}
          ;;
        esac
        case $r in *'x-scalpel-err: '[0-9]*)
          ne=${r#*x-scalpel-err: }
          ne=${ne%%[!0-9]*}
          ;;
        esac
        ;;
      esac
      case $st in 2[0-9][0-9]) ;; *) no= ;; esac
      if [ -n "$no" ] && [ -n "$ne" ]; then
        if [ "$no" -gt 0 ]; then cat "$d/out.$$"; fi
        if [ "$ne" -gt 0 ]; then cat "$d/err.$$" >&2; fi
        if [ "$no" -gt 0 ] || [ "$ne" -gt 0 ]; then rm -f "$d/out.$$" "$d/err.$$"; fi
        exit $((st - 200))
      fi
      # a server of another build (409) answers for its own build only
      [ "$st" = 409 ] && start=
    fi
  fi
fi

# the process path, with the same stdin bytes
if [ -n "$f" ]; then
  exec <"$f"
  rm -f "$f" "$d/out.$$" "$d/err.$$"
fi
if [ -n "$start" ]; then
  GIT_SCALPEL_SERVER=start
  export GIT_SCALPEL_SERVER
fi
exec node "$h/git-scalpel.cjs" "$@"

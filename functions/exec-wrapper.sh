#!/bin/sh
# The scan function's AWS_LAMBDA_EXEC_WRAPPER. Lambda's Node.js runtime starts the function as
#
#   <this script> /var/lang/bin/node --expose-gc --max-http-header-size 81920
#     --max-semi-space-size=<memory/20> --max-old-space-size=<memory*9/10> /var/runtime/index.mjs
#
# A semi-space of a twentieth of the memory (51 MB at 1 024 MB) lets V8's young generation grow to
# 128 MB, nearly all of it garbage for a scan that keeps its working set in typed arrays and
# collects at its own pace; NODE_OPTIONS cannot change it (the command line wins). This script
# passes every argument on, in order, but replaces the runtime's semi-space with
# SENTINEL_SEMI_SPACE_MB (default 8, node's own default is 16). A value that is not a whole number
# from 1 to 64 leaves the runtime's flag as it is, said on stderr: the function still starts.
#
# It also caps glibc's malloc arenas at 2 (MALLOC_ARENA_MAX, unless the function sets it): each of
# node's threads may otherwise keep an arena of its own, and memory freed there (buffers, typed
# arrays) stays in the process. One first scan of a million domains: 404 -> 389 MB (runs of the
# same scan differ by 10-25 MB).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
semi=${SENTINEL_SEMI_SPACE_MB:-8}
ignore() {
  echo "exec-wrapper.sh: SENTINEL_SEMI_SPACE_MB=$semi is not a whole number from 1 to 64; the runtime's flags stand" >&2
  exec "$@"
}
case $semi in
  '' | *[!0-9]* | 0*) ignore "$@" ;;
esac
[ "${#semi}" -le 2 ] && [ "$semi" -le 64 ] || ignore "$@"
node=$1
shift
# Node's own arguments come before its entry script, the first argument that names a file
# (/var/runtime/index.mjs; a flag's value such as --max-http-header-size's 81920 is none). Each
# semi-space flag among them goes (V8 reads _ as -), and the wrapper's comes right before the
# entry, after every other flag; the entry and its arguments pass untouched. Without an entry
# (node -e), the wrapper's flag goes first: every other semi-space flag is gone by then.
entry=
for arg do
  shift
  if [ -z "$entry" ]; then
    case $arg in
      --max[-_]semi[-_]space[-_]size=*) continue ;;
      -*) ;;
      *) [ -f "$arg" ] && entry=yes && set -- "$@" "--max-semi-space-size=$semi" ;;
    esac
  fi
  set -- "$@" "$arg"
done
[ -n "$entry" ] || set -- "--max-semi-space-size=$semi" "$@"
exec "$node" "$@"

#!/bin/sh
# The scan function's AWS_LAMBDA_EXEC_WRAPPER. Lambda's Node.js runtime starts the function as
#
#   <this script> /var/lang/bin/node --expose-gc --max-semi-space-size=<memory/20>
#                 --max-old-space-size=<memory*9/10> /var/runtime/index.mjs
#
# A semi-space of a twentieth of the memory (51 MB at 1 024 MB) lets V8's young generation grow to
# 128 MB, nearly all of it garbage for a scan that keeps its working set in typed arrays and
# collects at its own pace; NODE_OPTIONS cannot change it (the command line wins). This script
# passes every argument on, in order, but replaces the runtime's semi-space with
# SENTINEL_SEMI_SPACE_MB (default 8, node's own default is 16). A value that is not a whole number
# from 1 to 64 leaves the runtime's flag as it is: the function still starts.
#
# It also caps glibc's malloc arenas at 2 (MALLOC_ARENA_MAX, unless the function sets it): each of
# node's threads may otherwise keep an arena of its own, and memory freed there (buffers, typed
# arrays) stays in the process. Measured on a first scan of a million domains: 404 -> 389 MB.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
semi=${SENTINEL_SEMI_SPACE_MB:-8}
case $semi in
  '' | *[!0-9]* | 0*) exec "$@" ;;
esac
[ "$semi" -le 64 ] || exec "$@"
node=$1
shift
# Node's flags come before its script (every one of the runtime's is --name=value); the script and
# its arguments pass untouched.
flags=yes
for arg do
  shift
  case $flags$arg in
    yes--max-semi-space-size=*) ;;
    yes-*) set -- "$@" "$arg" ;;
    *) flags=no; set -- "$@" "$arg" ;;
  esac
done
exec "$node" "--max-semi-space-size=$semi" "$@"

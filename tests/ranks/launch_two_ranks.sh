#!/bin/sh
# Starts two ranks of a torch.distributed job on this machine the way torchrun would (RANK,
# LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); torchrun itself needs libuv, which
# Debian's torch is built without.  launch_two_ranks.sh SCRIPT ARGS...
export MASTER_ADDR=127.0.0.1 MASTER_PORT="${MASTER_PORT:-29511}" WORLD_SIZE=2 USE_LIBUV=0
script=$1
shift
RANK=0 LOCAL_RANK=0 /usr/bin/python3 "$script" "$@" &
first=$!
RANK=1 LOCAL_RANK=1 /usr/bin/python3 "$script" "$@"
second=$?
wait "$first"
status=$?
[ "$status" -ne 0 ] && exit "$status"
exit "$second"

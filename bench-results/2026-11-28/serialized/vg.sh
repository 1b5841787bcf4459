#!/bin/bash
# usage: vg.sh TARGETDIR LABEL NRANKS N  (PROG: the program, default /tmp/serial/pp,
# built by `/tmp/mpich/bin/mpicc -O2 -o /tmp/serial/pp pp.c`). Writes callgrind's
# file per rank to /tmp/serial/cg.LABEL.NRANKS.N.RANK; read it with
# `callgrind_annotate [--inclusive=yes --auto=no --threshold=100] FILE`.
T=$1; L=$2; NR=$3; N=$4; P=${PROG:-/tmp/serial/pp}
mkdir -p /tmp/serial
timeout 600 "$T/pertinax" run -n "$NR" -- sh -c "valgrind --tool=callgrind --callgrind-out-file=/tmp/serial/cg.$L.$NR.$N.\$PERTINAX_RANK $P $N" >/dev/null 2>"/tmp/serial/vg.$L.err"
echo rc=$?

#!/bin/bash
# usage: NP=1 LIB=/work/main/target/release /tmp/m4run/run.sh  -> per-module counts
NP=${NP:-1}; LIB=${LIB:-/work/main/target/release}
# mpi4py sources: pip download --no-deps --no-binary :all: mpi4py==4.1.2; tar xzf; then:
cd ${M4SRC:-/tmp/m4src/mpi4py-4.1.2}/test
out=${OUT:-/tmp/m4run}/np$NP; mkdir -p $out
for f in test_*.py; do m=${f%.py}
  MPI4PY_LIBMPI=$LIB/libmpi.so.12 timeout -k 5 ${TMO:-120} $LIB/pertinax run -n $NP -- /tmp/mpich/bin/python main.py $m > $out/$m.log 2>&1
  rc=$?
  ran=$(grep -oE "^Ran [0-9]+" $out/$m.log | head -1 | grep -oE "[0-9]+")
  res=$(grep -E "^(OK|FAILED)" $out/$m.log | head -1)
  echo "$m rc=$rc ran=${ran:-?} $res"
done

#!/usr/bin/env bash
# A/B: old (target/mpi-old) and new (target/mpi) spawn-ranks asker_dies, alternated
cd /work/main
OMPI=/tmp/ompi
declare -A ok bad
for v in old new; do ok[$v]=0; bad[$v]=0; done
for i in $(seq 1 ${1:-20}); do
 for v in old new; do
  B=target/mpi/release; [ $v = old ] && B=target/mpi-old/release
  RC=0
  OUT=$(timeout -k 5 40 $OMPI/bin/mpirun --allow-run-as-root --oversubscribe --with-ft ulfm --mca async_mpi_finalize 1 --mca coll ^han -x PERTINAX_MPI_SPAWN_BOUND=10000 -n 3 sh -c 'case "$OMPI_COMM_WORLD_RANK" in 0) export PERTINAX_FAULTS=ft.spawn.started@1:kill ;; esac; exec "$0" "$@"' env PERTINAX_MPI_SPAWN_BOUND=10000 $B/spawn-ranks asker_dies 2>&1) || RC=$?
  g=$(grep -c "its parents failed before" <<<"$OUT")
  p=$(grep -c "^OK asker_dies" <<<"$OUT")
  if [ "$g" -ge 2 ] && [ "$p" -ge 2 ]; then ok[$v]=$((ok[$v]+1)); else bad[$v]=$((bad[$v]+1)); echo "run $i $v bad rc=$RC children=$g parents=$p"; fi
 done
done
echo "old: ok=${ok[old]} bad=${bad[old]}   new: ok=${ok[new]} bad=${bad[new]}"

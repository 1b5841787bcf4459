/* The checks of the C test programs: CHECK(c) ends the job (code 3) with
 * the line and the condition when c is false. `rank` and `size` are set
 * by each program after MPI_Init. */
#ifndef PERTINAX_ABI_CHECK_H
#define PERTINAX_ABI_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;
#define CHECK(c)                                                          \
    do {                                                                  \
        if (!(c)) {                                                       \
            fprintf(stderr, "rank %d: check failed at line %d: %s\n",     \
                    rank, __LINE__, #c);                                  \
            MPI_Abort(MPI_COMM_WORLD, 3);                                 \
        }                                                                 \
    } while (0)
#endif

/*
 * A progress hook: a function of the program that MPI calls on each of its
 * progress rounds, so that work MPI does not know of (pertinax's own
 * matching, schedules and agreements) moves while the program blocks
 * inside an MPI call such as MPI_Allreduce.
 *
 * Open MPI runs every function registered with opal_progress_register
 * (libopen-pal's progress engine, which libnbc's non-blocking collectives
 * use the same way) on each pass of opal_progress, and every blocking
 * call of its spins on opal_progress. The function is looked up at run
 * time, so a program built against another MPI links and runs: there
 * pxm_progress_hook answers 0 and the caller keeps to calls that need no
 * hook. MPI 4.1's MPIX_Grequest_start poll function is the portable form,
 * but Open MPI 5.0.x does not have it.
 *
 * Registered once, right after MPI_Init, never from inside a progress
 * round (opal_progress_register reallocates the table that opal_progress
 * walks) and never unregistered: the hook itself returns at once while
 * the program has nothing for it to do.
 */
#include <dlfcn.h>
#include <stddef.h>

typedef int (*pxm_progress_fn)(void);
typedef int (*opal_register_fn)(pxm_progress_fn);

static int registered = 0;

int pxm_progress_hook(pxm_progress_fn cb) {
    if (registered) return 1;
    opal_register_fn reg = (opal_register_fn)dlsym(RTLD_DEFAULT, "opal_progress_register");
    if (reg == NULL) return 0;
    /* OPAL_SUCCESS is 0. */
    if (reg(cb) != 0) return 0;
    registered = 1;
    return 1;
}

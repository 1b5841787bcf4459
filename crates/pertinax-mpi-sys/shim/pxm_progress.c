/*
 * A progress hook: a function of the program that MPI calls on each of its
 * progress passes, so that work MPI does not know of (pertinax's own
 * matching, schedules and agreements) moves while the program blocks
 * inside an MPI call such as MPI_Allreduce.
 *
 * Open MPI runs every function registered with opal_progress_register
 * (libopen-pal's progress engine; libnbc registers its non-blocking
 * collectives' progress the same way) on each pass of opal_progress, and
 * every blocking call of its spins on opal_progress. The functions are
 * looked up at run time, so a program built against another MPI links and
 * runs: there pxm_progress_available answers 0 and the caller keeps to
 * calls that need no hook. MPI 4.1's MPIX_Grequest_start poll function is
 * the portable form, but Open MPI 5.0.x does not have it.
 *
 * The hook is registered for one blocking call and unregistered after it
 * (pxm_progress_arm / pxm_progress_disarm), never from inside a progress
 * pass: opal_progress_register may reallocate the table that opal_progress
 * walks, and a function left registered costs every later pass a call.
 */
#include <dlfcn.h>
#include <stddef.h>

typedef int (*pxm_progress_fn)(void);
typedef int (*opal_register_fn)(pxm_progress_fn);

static opal_register_fn reg = NULL, unreg = NULL;

int pxm_progress_available(void) {
    if (reg == NULL || unreg == NULL) {
        reg = (opal_register_fn)dlsym(RTLD_DEFAULT, "opal_progress_register");
        unreg = (opal_register_fn)dlsym(RTLD_DEFAULT, "opal_progress_unregister");
    }
    return reg != NULL && unreg != NULL;
}

/* OPAL_SUCCESS is 0. Registering a registered function does nothing. */
int pxm_progress_arm(pxm_progress_fn cb) {
    return pxm_progress_available() && reg(cb) == 0;
}

int pxm_progress_disarm(pxm_progress_fn cb) {
    return pxm_progress_available() && unreg(cb) == 0;
}

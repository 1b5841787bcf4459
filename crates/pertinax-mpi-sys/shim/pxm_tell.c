/*
 * Telling the jobs of a session of a process's death through PMIx.
 *
 * Open MPI 5.0.11 with PRRTE 3 notifies a death only within the dead
 * process's own job (PRRTE's errmgr_dvm.c: the event's range is the dead
 * process's namespace). A process of another job (a spawn's parents and
 * children) learns of it only when their TCP connection breaks, and at
 * times it never does: then its MPIX_Comm_agree waits forever for the
 * dead process while every other member has returned, and its receives
 * from the dead process never end (checks/spawned_agree_death.c; the MPI
 * replace campaign's hang, bench-results/2026-12-01/replace-hang).
 *
 * A process that knows of a death tells the session: one PMIx event,
 * PMIX_ERR_PROC_TERM_WO_SYNC with the dead process in PMIX_EVENT_AFFECTED_PROC,
 * range PMIX_RANGE_SESSION. Open MPI's own handler for that event, in
 * every process of the session, marks the process failed (nothing if it
 * already knew, or if it was never connected to it): the same path as a
 * death PRRTE reports.
 *
 * No PMIx header is read (the wheel ships none): the four functions are
 * found at run time (dlsym over the libraries already loaded: libmpi
 * needs libpmix), and the two types used are declared here as PMIx 4 and
 * 5 define them (pmix_common.h: pmix_proc_t is a 256-byte namespace and a
 * uint32_t rank; pmix_info_t is made and freed by PMIx itself). Without
 * PMIx in the process (MPICH, an MPI without it) nothing is told.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* pmix_proc_t: PMIX_MAX_NSLEN (255) + 1 characters, then pmix_rank_t. */
typedef struct {
    char nspace[256];
    uint32_t rank;
} pxm_pmix_proc;

#define PXM_PMIX_PROC 22                   /* the data type PMIX_PROC */
#define PXM_PMIX_RANGE_SESSION 4           /* PMIX_RANGE_SESSION */
#define PXM_PMIX_ERR_PROC_TERM_WO_SYNC (-200)
#define PXM_PMIX_EVENT_AFFECTED_PROC "pmix.evproc"

typedef void *(*pxm_info_create_fn)(size_t n);
typedef int (*pxm_info_load_fn)(void *info, const char *key, const void *data, uint16_t type);
typedef void (*pxm_info_free_fn)(void *info, size_t n);
typedef int (*pxm_notify_fn)(int status, const pxm_pmix_proc *source, uint8_t range,
                             const void *info, size_t ninfo, void *cbfunc, void *cbdata);

/* Fills `p` with a namespace and a rank; 0 if the namespace does not fit. */
static int pxm_proc(pxm_pmix_proc *p, const char *nspace, uint32_t rank) {
    size_t n = strlen(nspace);
    if (n == 0 || n >= sizeof p->nspace) {
        return 0;
    }
    memset(p, 0, sizeof *p);
    memcpy(p->nspace, nspace, n);
    p->rank = rank;
    return 1;
}

/*
 * Tells the session that process `rank` of namespace `nspace` died.
 * Returns PMIx's status (0 or PMIX_OPERATION_SUCCEEDED when told), -1 if
 * this process has no PMIx or no PMIx identity of its own, -2 for a
 * namespace that does not fit, -3 if PMIx could not make the event's info.
 * Blocking: PMIx hands the event to the local server and returns.
 */
int pxm_tell_failed(const char *nspace, uint32_t rank) {
    pxm_info_create_fn create = (pxm_info_create_fn)dlsym(RTLD_DEFAULT, "PMIx_Info_create");
    pxm_info_load_fn load = (pxm_info_load_fn)dlsym(RTLD_DEFAULT, "PMIx_Info_load");
    pxm_info_free_fn release = (pxm_info_free_fn)dlsym(RTLD_DEFAULT, "PMIx_Info_free");
    pxm_notify_fn notify = (pxm_notify_fn)dlsym(RTLD_DEFAULT, "PMIx_Notify_event");
    const char *own = getenv("PMIX_NAMESPACE");
    const char *own_rank = getenv("PMIX_RANK");
    if (!create || !load || !release || !notify || !own || !own_rank) {
        return -1;
    }
    pxm_pmix_proc source, dead;
    if (!pxm_proc(&source, own, (uint32_t)strtoul(own_rank, NULL, 10)) ||
        !pxm_proc(&dead, nspace, rank)) {
        return -2;
    }
    void *info = create(1);
    if (!info) {
        return -3;
    }
    int rc = load(info, PXM_PMIX_EVENT_AFFECTED_PROC, &dead, PXM_PMIX_PROC);
    if (rc == 0) {
        rc = notify(PXM_PMIX_ERR_PROC_TERM_WO_SYNC, &source, PXM_PMIX_RANGE_SESSION, info, 1,
                    NULL, NULL);
    }
    release(info, 1);
    return rc;
}

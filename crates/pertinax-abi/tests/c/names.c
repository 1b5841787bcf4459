/* pertinax-abi: name publishing. Rank 0 opens a port and publishes it as a
 * service name; after a barrier the other ranks look it up (the name
 * rank 0 broadcast is the one they find), connect to it as one group
 * while rank 0 accepts on MPI_COMM_SELF, and both sides exchange messages
 * over the intercommunicator (a bcast from rank 0, a reply from the
 * other group's rank 0). Then rank 0 unpublishes the name, after which
 * every lookup fails. With MPI_ERRORS_RETURN: a second publish of the
 * name and an unpublish for another port or of a name not published are
 * MPI_ERR_SERVICE, a lookup of an unknown name MPI_ERR_NAME, NULL
 * pointers MPI_ERR_ARG, a service name of MPI_MAX_PORT_NAME characters
 * MPI_ERR_ARG and a port name as long MPI_ERR_PORT. Runs at 1 rank too
 * (no connect then). Prints "OK names rank=R". */
#include "check.h"
#include <string.h>

static int class_of(int rc) {
    int c = rc;
    MPI_Error_class(rc, &c);
    return c;
}

static const char *service = "pertinax-names-test";

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME];
    char longname[MPI_MAX_PORT_NAME + 1];
    memset(longname, 'a', MPI_MAX_PORT_NAME);
    longname[MPI_MAX_PORT_NAME] = '\0';

    if (rank == 0) {
        CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
        CHECK(MPI_Publish_name(service, MPI_INFO_NULL, port) == MPI_SUCCESS);
    }
    CHECK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD) == MPI_SUCCESS);

    /* Found everywhere, once published. */
    memset(found, 0, sizeof found);
    CHECK(MPI_Lookup_name(service, MPI_INFO_NULL, found) == MPI_SUCCESS);
    CHECK(strcmp(found, port) == 0);

    /* The errors. */
    if (rank == size - 1)
        CHECK(class_of(MPI_Publish_name(service, MPI_INFO_NULL, "another port")) ==
              MPI_ERR_SERVICE);
    CHECK(class_of(MPI_Lookup_name("pertinax-no-such-service", MPI_INFO_NULL, found)) ==
          MPI_ERR_NAME);
    CHECK(class_of(MPI_Unpublish_name("pertinax-no-such-service", MPI_INFO_NULL, port)) ==
          MPI_ERR_SERVICE);
    CHECK(class_of(MPI_Publish_name(NULL, MPI_INFO_NULL, port)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Publish_name(service, MPI_INFO_NULL, NULL)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Lookup_name(service, MPI_INFO_NULL, NULL)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Lookup_name(NULL, MPI_INFO_NULL, found)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Unpublish_name(service, MPI_INFO_NULL, NULL)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Publish_name(longname, MPI_INFO_NULL, port)) == MPI_ERR_ARG);
    CHECK(class_of(MPI_Publish_name("pertinax-long-port", MPI_INFO_NULL, longname)) ==
          MPI_ERR_PORT);
    /* The name still names rank 0's port. */
    CHECK(MPI_Lookup_name(service, MPI_INFO_NULL, found) == MPI_SUCCESS);
    CHECK(strcmp(found, port) == 0);

    /* Rank 0 accepts, the others connect to the port they looked up. */
    if (size > 1) {
        MPI_Comm rest, ic;
        CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &rest) ==
              MPI_SUCCESS);
        int v = -1, reply = -1;
        if (rank == 0) {
            CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic) == MPI_SUCCESS);
            int n = -1;
            CHECK(MPI_Comm_remote_size(ic, &n) == MPI_SUCCESS && n == size - 1);
            v = 4242;
            CHECK(MPI_Bcast(&v, 1, MPI_INT, MPI_ROOT, ic) == MPI_SUCCESS);
            CHECK(MPI_Recv(&reply, 1, MPI_INT, 0, 7, ic, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(reply == 4243);
        } else {
            CHECK(MPI_Comm_connect(found, MPI_INFO_NULL, 0, rest, &ic) == MPI_SUCCESS);
            int n = -1;
            CHECK(MPI_Comm_remote_size(ic, &n) == MPI_SUCCESS && n == 1);
            CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, ic) == MPI_SUCCESS);
            CHECK(v == 4242);
            if (rank == 1) {
                reply = v + 1;
                CHECK(MPI_Send(&reply, 1, MPI_INT, 0, 7, ic) == MPI_SUCCESS);
            }
            CHECK(MPI_Comm_free(&rest) == MPI_SUCCESS);
        }
        CHECK(MPI_Comm_disconnect(&ic) == MPI_SUCCESS);
    }

    /* Unpublished: nobody finds it any more. */
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank == 0) {
        CHECK(class_of(MPI_Unpublish_name(service, MPI_INFO_NULL, "another port")) ==
              MPI_ERR_SERVICE);
        CHECK(MPI_Unpublish_name(service, MPI_INFO_NULL, port) == MPI_SUCCESS);
        CHECK(class_of(MPI_Unpublish_name(service, MPI_INFO_NULL, port)) == MPI_ERR_SERVICE);
        CHECK(MPI_Close_port(port) == MPI_SUCCESS);
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(class_of(MPI_Lookup_name(service, MPI_INFO_NULL, found)) == MPI_ERR_NAME);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK(MPI_Error_string(MPI_ERR_NAME, text, &len) == MPI_SUCCESS && len > 0);

    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    printf("OK names rank=%d\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

//! The MPICH ABI's values (`mpi.h` of MPICH 5, `libmpi.so.12`): handles
//! are `int`s whose bits say their kind (bits 30–31: builtin 1, direct 2),
//! their object type (bits 26–29) and an index; a builtin datatype's
//! bits 8–15 hold its size.

#![allow(missing_docs)]

use std::ffi::c_int;

pub const MPI_SUCCESS: c_int = 0;
pub const MPI_ERR_BUFFER: c_int = 1;
pub const MPI_ERR_COUNT: c_int = 2;
pub const MPI_ERR_TYPE: c_int = 3;
pub const MPI_ERR_TAG: c_int = 4;
pub const MPI_ERR_COMM: c_int = 5;
pub const MPI_ERR_RANK: c_int = 6;
pub const MPI_ERR_ROOT: c_int = 7;
pub const MPI_ERR_OP: c_int = 9;
pub const MPI_ERR_ARG: c_int = 12;
pub const MPI_ERR_UNKNOWN: c_int = 13;
pub const MPI_ERR_TRUNCATE: c_int = 14;
pub const MPI_ERR_OTHER: c_int = 15;
pub const MPI_ERR_INTERN: c_int = 16;
pub const MPI_ERR_IN_STATUS: c_int = 17;
pub const MPI_ERR_REQUEST: c_int = 19;
pub const MPI_ERR_SPAWN: c_int = 42;
pub const MPI_ERR_UNSUPPORTED_OPERATION: c_int = 44;
pub const MPI_ERR_ERRHANDLER: c_int = 80;
pub const MPI_ERR_LASTCODE: c_int = 0x3fff_ffff;
pub const MPIX_ERR_PROC_FAILED: c_int = 101;
pub const MPIX_ERR_PROC_FAILED_PENDING: c_int = 102;
pub const MPIX_ERR_REVOKED: c_int = 103;

pub const MPI_COMM_NULL: c_int = 0x0400_0000;
pub const MPI_COMM_WORLD: c_int = 0x4400_0000;
pub const MPI_COMM_SELF: c_int = 0x4400_0001;
/// A communicator this library made: this prefix and its index.
pub const COMM_DIRECT: c_int = 0x8400_0000_u32 as c_int;
pub const MPI_REQUEST_NULL: c_int = 0x2c00_0000;
/// A request: this prefix and its index.
pub const REQUEST_DIRECT: c_int = 0xac00_0000_u32 as c_int;
pub const MPI_MESSAGE_NULL: c_int = 0x2c00_0000;
pub const MPI_MESSAGE_NO_PROC: c_int = 0x6c00_0000;
/// A message a matched probe took: this prefix and its index.
pub const MESSAGE_DIRECT: c_int = 0xec00_0000_u32 as c_int;
pub const MPI_GROUP_NULL: c_int = 0x0800_0000;
pub const MPI_GROUP_EMPTY: c_int = 0x4800_0000;
/// A group: this prefix and its index.
pub const GROUP_DIRECT: c_int = 0x8800_0000_u32 as c_int;
pub const MPI_ERRHANDLER_NULL: c_int = 0x1400_0000;
pub const MPI_ERRORS_ARE_FATAL: c_int = 0x5400_0000;
pub const MPI_ERRORS_RETURN: c_int = 0x5400_0001;
pub const MPI_ERRORS_ABORT: c_int = 0x5400_0003;
/// A user error handler: this prefix and its index.
pub const ERRHANDLER_DIRECT: c_int = 0x9400_0000_u32 as c_int;
pub const MPI_KEYVAL_INVALID: c_int = 0x2400_0000;
/// A user keyval: this prefix and its index.
pub const KEYVAL_DIRECT: c_int = 0xa400_0000_u32 as c_int;
pub const MPI_ERR_KEYVAL: c_int = 48;
pub const MPI_DATATYPE_NULL: c_int = 0x0c00_0000;
pub const MPI_OP_NULL: c_int = 0x1800_0000;

pub const MPI_MAX: c_int = 0x5800_0001;
pub const MPI_MIN: c_int = 0x5800_0002;
pub const MPI_SUM: c_int = 0x5800_0003;
pub const MPI_PROD: c_int = 0x5800_0004;
pub const MPI_LAND: c_int = 0x5800_0005;
pub const MPI_BAND: c_int = 0x5800_0006;
pub const MPI_LOR: c_int = 0x5800_0007;
pub const MPI_BOR: c_int = 0x5800_0008;
pub const MPI_LXOR: c_int = 0x5800_0009;
pub const MPI_BXOR: c_int = 0x5800_000a;
pub const MPI_MINLOC: c_int = 0x5800_000b;
pub const MPI_MAXLOC: c_int = 0x5800_000c;

pub const MPI_CHAR: c_int = 0x4c00_0101;
pub const MPI_UNSIGNED_CHAR: c_int = 0x4c00_0102;
pub const MPI_SHORT: c_int = 0x4c00_0203;
pub const MPI_UNSIGNED_SHORT: c_int = 0x4c00_0204;
pub const MPI_INT: c_int = 0x4c00_0405;
pub const MPI_UNSIGNED: c_int = 0x4c00_0406;
pub const MPI_LONG: c_int = 0x4c00_0807;
pub const MPI_UNSIGNED_LONG: c_int = 0x4c00_0808;
pub const MPI_LONG_LONG_INT: c_int = 0x4c00_0809;
pub const MPI_FLOAT: c_int = 0x4c00_040a;
pub const MPI_DOUBLE: c_int = 0x4c00_080b;
pub const MPI_BYTE: c_int = 0x4c00_010d;
pub const MPI_WCHAR: c_int = 0x4c00_040e;
pub const MPI_PACKED: c_int = 0x4c00_010f;
pub const MPI_FLOAT_INT: c_int = 0x8c00_0000_u32 as c_int;
pub const MPI_DOUBLE_INT: c_int = 0x8c00_0001_u32 as c_int;
pub const MPI_LONG_INT: c_int = 0x8c00_0002_u32 as c_int;
pub const MPI_SHORT_INT: c_int = 0x8c00_0003_u32 as c_int;
pub const MPI_2INT: c_int = 0x4c00_0816;
pub const MPI_LONG_DOUBLE_INT: c_int = 0x8c00_0004_u32 as c_int;
pub const MPI_SIGNED_CHAR: c_int = 0x4c00_0118;
pub const MPI_UNSIGNED_LONG_LONG: c_int = 0x4c00_0819;
pub const MPI_INT8_T: c_int = 0x4c00_0137;
pub const MPI_INT16_T: c_int = 0x4c00_0238;
pub const MPI_INT32_T: c_int = 0x4c00_0439;
pub const MPI_INT64_T: c_int = 0x4c00_083a;
pub const MPI_UINT8_T: c_int = 0x4c00_013b;
pub const MPI_UINT16_T: c_int = 0x4c00_023c;
pub const MPI_UINT32_T: c_int = 0x4c00_043d;
pub const MPI_UINT64_T: c_int = 0x4c00_083e;
pub const MPI_C_BOOL: c_int = 0x4c00_013f;
pub const MPI_AINT: c_int = 0x4c00_0843;
pub const MPI_OFFSET: c_int = 0x4c00_0844;
pub const MPI_COUNT: c_int = 0x4c00_0845;
pub const MPI_LONG_DOUBLE: c_int = 0x4c00_100c;
pub const MPI_LB: c_int = 0x4c00_0010;
pub const MPI_UB: c_int = 0x4c00_0011;
pub const MPI_C_FLOAT_COMPLEX: c_int = 0x4c00_0840;
pub const MPI_C_DOUBLE_COMPLEX: c_int = 0x4c00_1041;
pub const MPI_C_LONG_DOUBLE_COMPLEX: c_int = 0x4c00_2042;
/// A datatype this library made (or a predefined pair type, indices
/// 0-4): this prefix and its index.
pub const DATATYPE_DIRECT: c_int = 0x8c00_0000_u32 as c_int;

pub const MPI_ERR_CONVERSION: c_int = 23;
pub const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 43;

pub const MPI_COMBINER_NAMED: c_int = 1;
pub const MPI_COMBINER_DUP: c_int = 2;
pub const MPI_COMBINER_CONTIGUOUS: c_int = 3;
pub const MPI_COMBINER_VECTOR: c_int = 4;
pub const MPI_COMBINER_HVECTOR: c_int = 6;
pub const MPI_COMBINER_INDEXED: c_int = 7;
pub const MPI_COMBINER_HINDEXED: c_int = 9;
pub const MPI_COMBINER_INDEXED_BLOCK: c_int = 10;
pub const MPI_COMBINER_STRUCT: c_int = 12;
pub const MPI_COMBINER_SUBARRAY: c_int = 13;
pub const MPI_COMBINER_RESIZED: c_int = 18;
pub const MPI_COMBINER_HINDEXED_BLOCK: c_int = 19;
pub const MPI_ORDER_C: c_int = 56;
pub const MPI_ORDER_FORTRAN: c_int = 57;
pub const MPI_TYPECLASS_REAL: c_int = 1;
pub const MPI_TYPECLASS_INTEGER: c_int = 2;
pub const MPI_TYPECLASS_COMPLEX: c_int = 3;

pub const MPI_PROC_NULL: c_int = -1;
pub const MPI_ANY_SOURCE: c_int = -2;
pub const MPI_ROOT: c_int = -3;
pub const MPI_ANY_TAG: c_int = -1;
pub const MPI_UNDEFINED: c_int = -32766;
pub const MPI_IDENT: c_int = 0;
pub const MPI_CONGRUENT: c_int = 1;
pub const MPI_UNEQUAL: c_int = 3;

pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1;

pub const MPI_MAX_PROCESSOR_NAME: usize = 128;
pub const MPI_MAX_ERROR_STRING: usize = 512;
pub const MPI_MAX_LIBRARY_VERSION_STRING: usize = 8192;
pub const MPI_VERSION: c_int = 5;
pub const MPI_SUBVERSION: c_int = 0;

pub const MPI_TAG_UB: c_int = 0x6440_0001;
pub const MPI_HOST: c_int = 0x6440_0003;
pub const MPI_IO: c_int = 0x6440_0005;
pub const MPI_WTIME_IS_GLOBAL: c_int = 0x6440_0007;
pub const MPI_UNIVERSE_SIZE: c_int = 0x6440_0009;
pub const MPI_APPNUM: c_int = 0x6440_000d;

/// `MPI_IN_PLACE`: `(void *)-1`.
pub const IN_PLACE: usize = usize::MAX;
/// `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE`: `(MPI_Status *)1`.
pub const STATUS_IGNORE: usize = 1;

/// MPICH's `MPI_Status`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MpiStatus {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub source: c_int,
    pub tag: c_int,
    pub error: c_int,
}

// ---------------------------------------------------------------------------
// Every other constant of MPICH's `mpi.h` a C program may name, with
// MPICH's values (the ABI): `gen/header.py` writes `include/mpi.h` from the
// `const MPI_*`/`MPIX_*` items of `src/*.rs`, and `tests/c_abi/` checks
// each value against MPICH's header. Not all of them mean something to this
// library (one-sided and the tool interface are not implemented).

use std::ffi::{c_char, c_void};
use std::ptr::{null_mut, without_provenance_mut};

/// `MPI_File`: a pointer in MPICH's ABI (`file.rs`: never dereferenced).
#[allow(non_camel_case_types)]
pub type MPI_File = *mut c_void;

// Error classes (MPICH's values).
pub const MPIX_ERR_EAGAIN: c_int = 104;
pub const MPIX_ERR_NOREQ: c_int = 105;
pub const MPIX_ERR_STREAM: c_int = 106;
pub const MPIX_ERR_TIMEOUT: c_int = 107;
pub const MPI_ERR_ABI: c_int = 81;
pub const MPI_ERR_ACCESS: c_int = 20;
pub const MPI_ERR_AMODE: c_int = 21;
pub const MPI_ERR_ASSERT: c_int = 53;
pub const MPI_ERR_BAD_FILE: c_int = 22;
pub const MPI_ERR_BASE: c_int = 46;
pub const MPI_ERR_DISP: c_int = 52;
pub const MPI_ERR_DUP_DATAREP: c_int = 24;
pub const MPI_ERR_FILE: c_int = 27;
pub const MPI_ERR_FILE_EXISTS: c_int = 25;
pub const MPI_ERR_FILE_IN_USE: c_int = 26;
pub const MPI_ERR_IO: c_int = 32;
pub const MPI_ERR_LOCKTYPE: c_int = 47;
pub const MPI_ERR_NAME: c_int = 33;
pub const MPI_ERR_NOT_SAME: c_int = 35;
pub const MPI_ERR_NO_MEM: c_int = 34;
pub const MPI_ERR_NO_SPACE: c_int = 36;
pub const MPI_ERR_NO_SUCH_FILE: c_int = 37;
pub const MPI_ERR_PENDING: c_int = 18;
pub const MPI_ERR_PORT: c_int = 38;
pub const MPI_ERR_PROC_ABORTED: c_int = 76;
pub const MPI_ERR_QUOTA: c_int = 39;
pub const MPI_ERR_READ_ONLY: c_int = 40;
pub const MPI_ERR_RMA_ATTACH: c_int = 56;
pub const MPI_ERR_RMA_CONFLICT: c_int = 49;
pub const MPI_ERR_RMA_FLAVOR: c_int = 58;
pub const MPI_ERR_RMA_RANGE: c_int = 55;
pub const MPI_ERR_RMA_SHARED: c_int = 57;
pub const MPI_ERR_RMA_SYNC: c_int = 50;
pub const MPI_ERR_SERVICE: c_int = 41;
pub const MPI_ERR_SESSION: c_int = 75;
pub const MPI_ERR_SIZE: c_int = 51;
pub const MPI_ERR_VALUE_TOO_LARGE: c_int = 77;
pub const MPI_ERR_WIN: c_int = 45;
pub const MPI_LASTUSEDCODE: c_int = 0x6440_000b;
pub const MPI_T_ERR_CANNOT_INIT: c_int = 61;
pub const MPI_T_ERR_CVAR_SET_NEVER: c_int = 69;
pub const MPI_T_ERR_CVAR_SET_NOT_NOW: c_int = 68;
pub const MPI_T_ERR_INVALID: c_int = 74;
pub const MPI_T_ERR_INVALID_HANDLE: c_int = 64;
pub const MPI_T_ERR_INVALID_INDEX: c_int = 62;
pub const MPI_T_ERR_INVALID_ITEM: c_int = 63;
pub const MPI_T_ERR_INVALID_NAME: c_int = 73;
pub const MPI_T_ERR_INVALID_SESSION: c_int = 67;
pub const MPI_T_ERR_MEMORY: c_int = 59;
pub const MPI_T_ERR_NOT_ACCESSIBLE: c_int = 79;
pub const MPI_T_ERR_NOT_INITIALIZED: c_int = 60;
pub const MPI_T_ERR_NOT_SUPPORTED: c_int = 78;
pub const MPI_T_ERR_OUT_OF_HANDLES: c_int = 65;
pub const MPI_T_ERR_OUT_OF_SESSIONS: c_int = 66;
pub const MPI_T_ERR_PVAR_NO_ATOMIC: c_int = 72;
pub const MPI_T_ERR_PVAR_NO_STARTSTOP: c_int = 70;
pub const MPI_T_ERR_PVAR_NO_WRITE: c_int = 71;

// Predefined handles and attribute keys.
pub const MPIX_EQUAL: c_int = 0x5800_000f;
pub const MPIX_STREAM_NULL: c_int = 0x3c00_0000;
pub const MPI_NO_OP: c_int = 0x5800_000e;
pub const MPI_REPLACE: c_int = 0x5800_000d;
pub const MPI_SESSION_NULL: c_int = 0x3800_0000;
pub const MPI_WIN_BASE: c_int = 0x6600_0001;
pub const MPI_WIN_CREATE_FLAVOR: c_int = 0x6600_0007;
pub const MPI_WIN_DISP_UNIT: c_int = 0x6600_0005;
pub const MPI_WIN_MODEL: c_int = 0x6600_0009;
pub const MPI_WIN_NULL: c_int = 0x2000_0000;
pub const MPI_WIN_SIZE: c_int = 0x6600_0003;

// Predefined datatypes (MPICH's values; the library implements those of
// fixed size in `datatype.rs`).
pub const MPIX_BFLOAT16: c_int = 0x4c00_024c;
pub const MPIX_C_FLOAT16: c_int = 0x4c00_0246;
pub const MPI_2DOUBLE_PRECISION: c_int = 0x4c00_1023;
pub const MPI_2INTEGER: c_int = 0x4c00_0820;
pub const MPI_2REAL: c_int = 0x4c00_0821;
pub const MPI_CHARACTER: c_int = 0x4c00_011a;
pub const MPI_COMPLEX: c_int = 0x4c00_081e;
pub const MPI_COMPLEX16: c_int = 0x4c00_102a;
pub const MPI_COMPLEX32: c_int = 0x4c00_202c;
pub const MPI_COMPLEX4: c_int = 0x4c00_042e;
pub const MPI_COMPLEX8: c_int = 0x4c00_0828;
pub const MPI_CXX_BOOL: c_int = 0x4c00_0133;
pub const MPI_CXX_DOUBLE_COMPLEX: c_int = 0x4c00_1035;
pub const MPI_CXX_FLOAT_COMPLEX: c_int = 0x4c00_0834;
pub const MPI_CXX_LONG_DOUBLE_COMPLEX: c_int = 0x4c00_2036;
pub const MPI_C_COMPLEX: c_int = 0x4c00_0840;
pub const MPI_DOUBLE_COMPLEX: c_int = 0x4c00_1022;
pub const MPI_DOUBLE_PRECISION: c_int = 0x4c00_081f;
pub const MPI_INTEGER: c_int = 0x4c00_041b;
pub const MPI_INTEGER1: c_int = 0x4c00_012d;
pub const MPI_INTEGER16: c_int = 0x4c00_1032;
pub const MPI_INTEGER2: c_int = 0x4c00_022f;
pub const MPI_INTEGER4: c_int = 0x4c00_0430;
pub const MPI_INTEGER8: c_int = 0x4c00_0831;
pub const MPI_LOGICAL: c_int = 0x4c00_041d;
pub const MPI_LOGICAL1: c_int = 0x4c00_0147;
pub const MPI_LOGICAL16: c_int = 0x4c00_104b;
pub const MPI_LOGICAL2: c_int = 0x4c00_0248;
pub const MPI_LOGICAL4: c_int = 0x4c00_0449;
pub const MPI_LOGICAL8: c_int = 0x4c00_084a;
pub const MPI_LONG_LONG: c_int = 0x4c00_0809;
pub const MPI_REAL: c_int = 0x4c00_041c;
pub const MPI_REAL16: c_int = 0x4c00_102b;
pub const MPI_REAL2: c_int = 0x4c00_0226;
pub const MPI_REAL4: c_int = 0x4c00_0427;
pub const MPI_REAL8: c_int = 0x4c00_0829;

// String lengths (a C program's buffers; the library writes at most this
// many bytes, the NUL included).
pub const MPI_MAX_DATAREP_STRING: usize = 128;
pub const MPI_MAX_PORT_NAME: usize = 256;
pub const MPI_MAX_PSET_NAME_LEN: usize = 256;
pub const MPI_MAX_STRINGTAG_LEN: usize = 256;

// Pointer values: the C header casts the address to the pointer type
// (`gen/header.py`).
pub const MPI_ARGVS_NULL: *mut *mut *mut c_char = null_mut();
pub const MPI_ARGV_NULL: *mut *mut c_char = null_mut();
pub const MPI_BOTTOM: *mut c_void = null_mut();
pub const MPI_BUFFER_AUTOMATIC: *mut c_void = without_provenance_mut(usize::MAX - 1);
pub const MPI_ERRCODES_IGNORE: *mut c_int = null_mut();
pub const MPI_FILE_NULL: MPI_File = null_mut();
pub const MPI_IN_PLACE: *mut c_void = without_provenance_mut(usize::MAX);
pub const MPI_STATUSES_IGNORE: *mut MpiStatus = without_provenance_mut(1);
pub const MPI_STATUS_IGNORE: *mut MpiStatus = without_provenance_mut(1);

// Enumerations of MPICH's `mpi.h` (topologies, combiners, windows, the
// tool interface), as `int`s.
pub const MPIX_ASYNC_DONE: c_int = 1;
pub const MPIX_ASYNC_NOPROGRESS: c_int = 0;
pub const MPI_COMBINER_DARRAY: c_int = 14;
pub const MPI_COMBINER_F90_COMPLEX: c_int = 16;
pub const MPI_COMBINER_F90_INTEGER: c_int = 17;
pub const MPI_COMBINER_F90_REAL: c_int = 15;
pub const MPI_COMBINER_HINDEXED_INTEGER: c_int = 8;
pub const MPI_COMBINER_HVECTOR_INTEGER: c_int = 5;
pub const MPI_COMBINER_STRUCT_INTEGER: c_int = 11;
pub const MPI_COMBINER_VALUE_INDEX: c_int = 20;
pub const MPI_T_BIND_INVALID: c_int = 0;
pub const MPI_T_BIND_MPI_COMM: c_int = 9701;
pub const MPI_T_BIND_MPI_DATATYPE: c_int = 9702;
pub const MPI_T_BIND_MPI_ERRHANDLER: c_int = 9703;
pub const MPI_T_BIND_MPI_FILE: c_int = 9704;
pub const MPI_T_BIND_MPI_GROUP: c_int = 9705;
pub const MPI_T_BIND_MPI_INFO: c_int = 9710;
pub const MPI_T_BIND_MPI_MESSAGE: c_int = 9709;
pub const MPI_T_BIND_MPI_OP: c_int = 9706;
pub const MPI_T_BIND_MPI_REQUEST: c_int = 9707;
pub const MPI_T_BIND_MPI_SESSION: c_int = 9711;
pub const MPI_T_BIND_MPI_WIN: c_int = 9708;
pub const MPI_T_BIND_NO_OBJECT: c_int = 9700;
pub const MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: c_int = 3;
pub const MPI_T_CB_REQUIRE_MPI_RESTRICTED: c_int = 1;
pub const MPI_T_CB_REQUIRE_NONE: c_int = 0;
pub const MPI_T_CB_REQUIRE_THREAD_SAFE: c_int = 2;
pub const MPI_T_PVAR_CLASS_AGGREGATE: c_int = 247;
pub const MPI_T_PVAR_CLASS_COUNTER: c_int = 246;
pub const MPI_T_PVAR_CLASS_GENERIC: c_int = 249;
pub const MPI_T_PVAR_CLASS_HIGHWATERMARK: c_int = 244;
pub const MPI_T_PVAR_CLASS_INVALID: c_int = 0;
pub const MPI_T_PVAR_CLASS_LEVEL: c_int = 241;
pub const MPI_T_PVAR_CLASS_LOWWATERMARK: c_int = 245;
pub const MPI_T_PVAR_CLASS_PERCENTAGE: c_int = 243;
pub const MPI_T_PVAR_CLASS_SIZE: c_int = 242;
pub const MPI_T_PVAR_CLASS_STATE: c_int = 240;
pub const MPI_T_PVAR_CLASS_TIMER: c_int = 248;
pub const MPI_T_SCOPE_ALL: c_int = 60443;
pub const MPI_T_SCOPE_ALL_EQ: c_int = 60444;
pub const MPI_T_SCOPE_CONSTANT: c_int = 60438;
pub const MPI_T_SCOPE_GROUP: c_int = 60441;
pub const MPI_T_SCOPE_GROUP_EQ: c_int = 60442;
pub const MPI_T_SCOPE_INVALID: c_int = 0;
pub const MPI_T_SCOPE_LOCAL: c_int = 60440;
pub const MPI_T_SCOPE_READONLY: c_int = 60439;
pub const MPI_T_SOURCE_ORDERED: c_int = 0;
pub const MPI_T_SOURCE_UNORDERED: c_int = 1;
pub const MPI_T_VERBOSITY_INVALID: c_int = 0;
pub const MPI_T_VERBOSITY_MPIDEV_ALL: c_int = 229;
pub const MPI_T_VERBOSITY_MPIDEV_BASIC: c_int = 227;
pub const MPI_T_VERBOSITY_MPIDEV_DETAIL: c_int = 228;
pub const MPI_T_VERBOSITY_TUNER_ALL: c_int = 226;
pub const MPI_T_VERBOSITY_TUNER_BASIC: c_int = 224;
pub const MPI_T_VERBOSITY_TUNER_DETAIL: c_int = 225;
pub const MPI_T_VERBOSITY_USER_ALL: c_int = 223;
pub const MPI_T_VERBOSITY_USER_BASIC: c_int = 221;
pub const MPI_T_VERBOSITY_USER_DETAIL: c_int = 222;
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 2;
pub const MPI_WIN_FLAVOR_CREATE: c_int = 1;
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 3;
pub const MPI_WIN_FLAVOR_SHARED: c_int = 4;
pub const MPI_WIN_SEPARATE: c_int = 1;
pub const MPI_WIN_UNIFIED: c_int = 2;

// Other integer constants.
pub const MPIX_COMM_TYPE_NEIGHBORHOOD: c_int = 5;
pub const MPIX_GPU_SUPPORT_CUDA: c_int = 0;
pub const MPIX_GPU_SUPPORT_HIP: c_int = 2;
pub const MPIX_GPU_SUPPORT_ZE: c_int = 1;
pub const MPI_BSEND_OVERHEAD: c_int = 96;
pub const MPI_DISPLACEMENT_CURRENT: i64 = -54278278;
pub const MPI_DISTRIBUTE_BLOCK: c_int = 121;
pub const MPI_DISTRIBUTE_CYCLIC: c_int = 122;
pub const MPI_DISTRIBUTE_DFLT_DARG: c_int = -49767;
pub const MPI_DISTRIBUTE_NONE: c_int = 123;
pub const MPI_F_ERROR: c_int = 4;
pub const MPI_F_SOURCE: c_int = 2;
pub const MPI_F_STATUS_SIZE: c_int = 5;
pub const MPI_F_TAG: c_int = 3;
pub const MPI_LOCK_EXCLUSIVE: c_int = 234;
pub const MPI_LOCK_SHARED: c_int = 235;
pub const MPI_MODE_APPEND: c_int = 128;
pub const MPI_MODE_CREATE: c_int = 1;
pub const MPI_MODE_DELETE_ON_CLOSE: c_int = 16;
pub const MPI_MODE_EXCL: c_int = 64;
pub const MPI_MODE_NOCHECK: c_int = 1024;
pub const MPI_MODE_NOPRECEDE: c_int = 8192;
pub const MPI_MODE_NOPUT: c_int = 4096;
pub const MPI_MODE_NOSTORE: c_int = 2048;
pub const MPI_MODE_NOSUCCEED: c_int = 16384;
pub const MPI_MODE_RDONLY: c_int = 2;
pub const MPI_MODE_RDWR: c_int = 8;
pub const MPI_MODE_SEQUENTIAL: c_int = 256;
pub const MPI_MODE_UNIQUE_OPEN: c_int = 32;
pub const MPI_MODE_WRONLY: c_int = 4;
pub const MPI_SEEK_CUR: c_int = 602;
pub const MPI_SEEK_END: c_int = 604;
pub const MPI_SEEK_SET: c_int = 600;
pub const MPI_THREAD_MULTIPLE: c_int = 3;
pub const MPI_THREAD_SERIALIZED: c_int = 2;

// `printf` formats of an `MPI_Aint` (a C `long`).
pub const MPI_AINT_FMT_DEC_SPEC: &str = "%ld";
pub const MPI_AINT_FMT_HEX_SPEC: &str = "%lx";

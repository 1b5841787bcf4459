#!/usr/bin/env python3
"""Generate src/unsupported.rs: a stub for every function libmpi.so.12 exports
that this crate does not implement by hand.

Usage: gen/unsupported.py [MPI_PROTO_H [LIBMPI_SO]]
  MPI_PROTO_H  MPICH 5's mpi_proto.h  (default /tmp/mpich/include/mpi_proto.h)
  LIBMPI_SO    MPICH 5's libmpi.so.12 (default: ../lib/libmpi.so.12 beside
               the include directory of MPI_PROTO_H)

The exported functions are those `nm -D --defined-only LIBMPI_SO` lists as
`MPI_*` (and the `MPIX_*` ones that mpi_proto.h declares). A function is left
out when `fn MPI_X(` or `fn PMPI_X(` (also `mpi! { fn PMPI_X(..) -> T as
MPI_X {..} }`, `#[export_name = "..."]` or an `unsupported!(MPI_X, ...)`
written by hand) appears in any `src/**/*.rs` other than
`src/unsupported.rs` itself, so re-running this after implementing a function
by hand drops its stub. Functions that do not return an `int` error code
(non-`int` results, and the `int` values of NOT_ERROR_CODE) and variadic ones
are never stubbed: they are listed at the end of the generated file and in
the summary, to be written by hand.

Only the standard library is used; run with python3 (3.8 or later).
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CRATE = os.path.dirname(HERE)
SRC = os.path.join(CRATE, "src")
OUT = os.path.join(SRC, "unsupported.rs")
OUT_REL = "src/unsupported.rs"

DEFAULT_PROTO = "/tmp/mpich/include/mpi_proto.h"

# C types passed by value, and their Rust types. Every pointer, array and
# function type (a function type as a parameter decays to a pointer) is
# `*mut c_void` whatever it points to, so is not listed here.
INT_TYPES = {
    # `int` and MPICH's integer handles (mpi.h: `typedef int MPI_Comm;` ...)
    "int", "MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Op", "MPI_Request",
    "MPI_Errhandler", "MPI_Info", "MPI_Win", "MPI_Message", "MPI_Session",
    "MPI_Fint", "MPIX_Stream", "MPIX_Grequest_class",
    # enums (mpi.h: `typedef enum MPI_T_cb_safety {...} MPI_T_cb_safety;`)
    "MPI_T_cb_safety", "MPI_T_source_order",
}
PTR_TYPES = {
    # handles that are pointers in MPICH's ABI
    # (mpi.h: `typedef struct ADIOI_FileD *MPI_File;` ...)
    "MPI_File", "MPI_T_enum", "MPI_T_cvar_handle", "MPI_T_pvar_handle",
    "MPI_T_pvar_session", "MPI_T_event_registration", "MPI_T_event_instance",
    "MPIX_Async_thing",
}
OTHER_TYPES = {
    "MPI_Aint": "MPI_Aint",  # the crate's `pub type MPI_Aint = isize` (C `long`)
    "MPI_Offset": "i64",  # C `long long`
    "MPI_Count": "i64",  # C `long long`
    "double": "f64",
}
# Functions whose `int` result is a value, not an error code: a stub would
# hand MPI_ERR_UNSUPPORTED_OPERATION (44) back as that value, so they go to
# the hand-written list with the non-`int` ones.
NOT_ERROR_CODE = [
    (re.compile(r"^MPI_\w+_toint$"), "returns the handle as an int, not an error code"),
    (re.compile(r"^MPIX_Query_\w+_support$"), "returns 1 if supported else 0, not an error code"),
    (re.compile(r"^MPIX_Request_is_complete$"), "returns a flag, not an error code"),
]

# Function typedefs (`typedef int (MPI_X_function)(...)`): match by name.
FUNC_TYPE = re.compile(r"^\w+_(function|function_c|function_x|fn)$")

RUST_KEYWORDS = {
    "as", "async", "await", "break", "const", "continue", "crate", "dyn",
    "else", "enum", "extern", "false", "fn", "for", "gen", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do",
    "final", "macro", "override", "priv", "try", "typeof", "unsized",
    "virtual", "yield", "union",
}
RENAME = {"type": "ty", "in": "inp", "ref": "r", "fn": "f", "self": "this",
          "Self": "this", "box": "bx", "mod": "md", "use": "us",
          "match": "mt", "loop": "lp", "move": "mv", "final": "fin"}
# Names the stub may not use for a parameter: the macro's `none` marker and
# the Rust types the stubs name.
RESERVED = {"none", "c_int", "c_void", "MPI_Aint", "i64", "f64", "comm_or_world"}


def die(msg):
    sys.exit("unsupported.py: " + msg)


def parse_prototypes(path):
    """Map each MPI_/MPIX_ name to (return type, [parameter strings], variadic)."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))
    text = re.sub(r"\bMPICH_ATTR_\w+\s*\([^()]*\)", " ", text)
    text = re.sub(r"\bMPICH_API_PUBLIC\b", " ", text)
    protos = {}
    for decl in text.split(";"):
        decl = " ".join(decl.split())
        if not decl or decl.startswith("typedef") or decl.startswith("extern"):
            continue
        m = re.match(r"^(.*?)\b((?:MPI|MPIX)_\w+)\s*\((.*)\)$", decl)
        if not m or not m.group(1).strip():
            continue
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
        if name in protos:
            continue
        plist = split_params(params)
        variadic = "..." in plist
        protos[name] = (ret, [p for p in plist if p != "..."], variadic)
    return protos


def split_params(params):
    """Split a C parameter list at top-level commas; `(void)` is empty."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    if out == ["void"]:
        return []
    return out


def rust_param(param, index, fname):
    """One C parameter -> (rust name, rust type, C by-value type or None)."""
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", param)  # void (*name)(...)
    if m:
        return m.group(1), "*mut c_void", None
    is_ptr = "*" in param or "[" in param
    core = re.sub(r"\[[^\]]*\]", " ", param).replace("*", " ")
    toks = [t for t in core.split() if t not in ("const", "volatile", "restrict", "struct", "enum")]
    if not toks:
        die("cannot parse parameter %r of %s" % (param, fname))
    if len(toks) == 1 or (len(toks) == 2 and toks[0] in ("unsigned", "signed", "long")
                          and toks[1] in ("int", "long", "char", "short")):
        ctype, name = " ".join(toks), "arg%d" % index  # unnamed parameter
    else:
        ctype, name = " ".join(toks[:-1]), toks[-1]
    if name in RUST_KEYWORDS or name in RESERVED:
        name = RENAME.get(name, name + "_")
    if is_ptr or ctype in PTR_TYPES or FUNC_TYPE.match(ctype):
        return name, "*mut c_void", None
    if ctype in INT_TYPES:
        return name, "c_int", ctype
    if ctype in OTHER_TYPES:
        return name, OTHER_TYPES[ctype], ctype
    die("unknown C type %r (parameter %r of %s): add it to the tables" % (ctype, param, fname))


def exported_symbols(lib):
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die("nm -D --defined-only %s failed: %s" % (lib, e))
    funcs, data = set(), {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        kind, name = parts[1], parts[2]
        if kind in ("T", "W", "i"):
            funcs.add(name)
        elif kind in ("D", "B", "d", "b", "R", "V"):
            data[name] = kind
    return funcs, data


def hand_written(src_dir, skip):
    """Names defined in src/**/*.rs (not `skip`): `fn NAME(`, `export_name`,
    and the names of `unsupported!(...)` written by hand."""
    names = set()
    for root, _dirs, files in os.walk(src_dir):
        for fn in files:
            path = os.path.join(root, fn)
            if not fn.endswith(".rs") or os.path.abspath(path) == os.path.abspath(skip):
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            text = re.sub(r"//[^\n]*", " ", text)
            names.update(re.findall(r"\bfn\s+(\w+)\s*(?:<[^>]*>)?\s*\(", text))
            names.update(re.findall(r"export_name\s*=\s*\"(\w+)\"", text))
            # Names given to the defining macros as bare identifiers
            # (convert.rs's `identity!`, vcoll.rs's `v_forms!`): any
            # function name in the code outside comments and strings.
            code = re.sub(r'"(?:[^"\\]|\\.)*"', " ", text)
            names.update(re.findall(r"\b(P?MPIX?_[A-Za-z]\w*)\b", code))
            # `large!`'s `fn PMPI_X_c as MPI_X_c => ...`.
            names.update(re.findall(r"\bfn\s+(\w+)\s+as\s+\w+\s*=>", text))
            # lib.rs's `mpi! { fn PMPI_X(...) -> T as MPI_X { ... } }`
            names.update(re.findall(r"\bas\s+(P?MPIX?_\w+)\b", text))
            for a, b in re.findall(r"\bunsupported!\s*\(\s*(\w+)\s*,\s*(\w+)", text):
                names.update((a, b))
    return names


def aint_module(src_dir):
    """The module path of the crate's `pub type MPI_Aint` (lib.rs: `crate`,
    types.rs: `crate::types`, a/b.rs or a/b/mod.rs: `crate::a::b`)."""
    found = []
    for root, _dirs, files in os.walk(src_dir):
        for fn in files:
            path = os.path.join(root, fn)
            if not fn.endswith(".rs") or os.path.abspath(path) == os.path.abspath(OUT):
                continue
            with open(path, encoding="utf-8") as f:
                if re.search(r"\bpub\s+type\s+MPI_Aint\b", f.read()):
                    rel = os.path.relpath(path, src_dir)[:-3].split(os.sep)
                    if rel[-1] == "mod":
                        rel = rel[:-1]
                    if rel in (["lib"], ["main"]):
                        rel = []
                    found.append("::".join(["crate"] + rel))
    if len(found) > 1:
        die("`pub type MPI_Aint` defined more than once: " + ", ".join(sorted(found)))
    return found[0] if found else "crate::types"  # not written yet


def c_data_type(mpi_h_text, name):
    """The C type mpi.h declares the data symbol `name` with, if it does."""
    m = re.search(r"extern\s+([^;]*?)\b%s\b" % re.escape(name), mpi_h_text)
    if not m:
        return None
    ty = m.group(1).replace("MPIU_DLL_SPEC", " ")
    return " ".join(ty.split())


def main(argv):
    if len(argv) > 3 or any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__.strip())
        return 0 if len(argv) <= 3 else 2
    proto = argv[1] if len(argv) > 1 else DEFAULT_PROTO
    inc = os.path.dirname(os.path.abspath(proto))
    lib = argv[2] if len(argv) > 2 else os.path.join(os.path.dirname(inc), "lib", "libmpi.so.12")
    for p in (proto, lib):
        if not os.path.isfile(p):
            die("%s not found (python3 -m venv /tmp/mpich && /tmp/mpich/bin/pip install mpich)" % p)
    mpi_h_path = os.path.join(inc, "mpi.h")
    mpi_h = ""
    if os.path.isfile(mpi_h_path):
        with open(mpi_h_path) as f:
            mpi_h = f.read()

    protos = parse_prototypes(proto)
    funcs, data = exported_symbols(lib)

    mpi_names = sorted(n for n in funcs if n.startswith("MPI_"))
    mpix_names = sorted(n for n in funcs if n.startswith("MPIX_") and n in protos)
    mpix_unknown = sorted(n for n in funcs if n.startswith("MPIX_") and n not in protos)
    missing = [n for n in mpi_names if n not in protos]
    if missing:
        die("exported but not in %s: %s" % (proto, " ".join(missing)))
    no_pmpi = [n for n in mpi_names + mpix_names if "P" + n not in funcs]

    done = hand_written(SRC, OUT)
    stubs, implemented, hand, half = [], [], [], []
    for name in mpi_names + mpix_names:
        pname = "P" + name
        ret, params, variadic = protos[name]
        value = [why for rx, why in NOT_ERROR_CODE if rx.match(name)]
        if ret != "int" or variadic or value:
            what = "variadic" if variadic else value[0] if value else "returns " + ret
            present = name in done and pname in done
            if (name in done) != (pname in done):
                half.append(pname if name in done else name)
            hand.append((name, pname, what, present, ret, params, variadic))
            continue
        if name in done or pname in done:
            implemented.append(name)
            if not (name in done and pname in done):
                half.append(pname if name in done else name)
            continue
        args, comm = [], "none"
        for i, p in enumerate(params):
            rname, rty, ctype = rust_param(p, i, name)
            args.append("%s: %s" % (rname, rty))
            if ctype == "MPI_Comm" and comm == "none":
                comm = rname
        if len({a.split(":")[0] for a in args}) != len(args):
            die("duplicate parameter names in %s" % name)
        stubs.append("unsupported!(%s, %s, (%s), %s);" % (name, pname, ", ".join(args), comm))

    other_funcs = sorted(n for n in funcs if not re.match(r"^P?MPIX?_", n))
    lines = [
        "//! Stubs for the functions MPICH 5's `libmpi.so.12` exports that this",
        "//! crate does not implement: each returns `MPI_ERR_UNSUPPORTED_OPERATION`",
        "//! through the error handler (of its first `MPI_Comm` parameter, else of",
        "//! `MPI_COMM_WORLD`).",
        "//!",
        "//! Generated by `gen/unsupported.py` from MPICH 5's prototypes",
        "//! (`mpi_proto.h`) and the export list of its `libmpi.so.12`: do not edit.",
        "//! Implement a function by hand in another file under `src/` and re-run",
        "//! `python3 gen/unsupported.py` to drop its stub here.",
        "",
    ]
    used = " ".join(stubs)
    ffi = [t for t in ("c_int", "c_void") if re.search(r"\b%s\b" % t, used)]
    if ffi:
        lines.append("use std::ffi::{%s};" % ", ".join(ffi) if len(ffi) > 1 else "use std::ffi::%s;" % ffi[0])
    if re.search(r": MPI_Aint\b", used):
        lines.append("")
        lines.append("use %s::MPI_Aint;" % aint_module(SRC))
    if ffi:
        lines.append("")
    lines += stubs
    lines += ["", "// Implemented by hand elsewhere or still missing: these do not return an",
              "// error code, or are variadic, so they cannot be stubbed here.", "//"]
    for name, pname, what, present, ret, params, variadic in hand:
        sig = "%s %s(%s%s)" % (ret, name, ", ".join(params) or "void", ", ..." if variadic else "")
        lines.append("// %-9s %s / %s: %s" % ("[present]" if present else "[MISSING]", name, pname, what))
        lines.append("//     C: %s" % sig)
    lines += ["//", "// Data symbols libmpi.so.12 exports (nm type, C type in mpi.h):", "//"]
    for name in sorted(data):
        ty = c_data_type(mpi_h, name)
        lines.append("//   %s (%s): %s" % (name, data[name], ty if ty else "not declared in mpi.h (MPICH-internal, Fortran bindings)"))
    lines += ["//", "// Other exported functions, outside MPI_/MPIX_ and not generated here:", "//"]
    for name in other_funcs:
        # mpi.h's macros that expand to it (`#define MPI_DUP_FN MPIR_Dup_fn`):
        # a C program built against mpi.h links to it.
        macros = re.findall(r"^\s*#\s*define\s+(\w+)\s+\(?\s*%s\b" % re.escape(name), mpi_h, flags=re.M)
        if macros:
            sig = ""
            for mac in macros:
                if mac in protos:
                    ret, params, _v = protos[mac]
                    sig = ": %s %s(%s)" % (ret, name, ", ".join(params))
            lines.append("//   %s  NEEDED: mpi.h's %s expands to it, so C programs link to it%s"
                         % (name, ", ".join(macros), sig))
        else:
            lines.append("//   " + name)
    if not other_funcs:
        lines.append("//   (none)")
    if mpix_unknown:
        lines += ["//", "// Exported MPIX_ functions without a prototype in mpi_proto.h (left out):",
                  "//   " + " ".join(mpix_unknown)]
    text = "\n".join(lines) + "\n"
    old = None
    if os.path.isfile(OUT):
        with open(OUT, encoding="utf-8") as f:
            old = f.read()
    if text != old:  # unchanged: keep the mtime, so cargo does not rebuild
        with open(OUT, "w", encoding="utf-8") as f:
            f.write(text)

    total = len(mpi_names) + len(mpix_names)
    missing_hand = [h[0] for h in hand if not h[3]]
    print("unsupported.py: %d stubbed, %d skipped as implemented, %d for hand (%d missing: %s) "
          "= %d exported (%d MPI_ + %d MPIX_); wrote %s"
          % (len(stubs), len(implemented), len(hand), len(missing_hand),
             " ".join(missing_hand) if missing_hand else "none", total,
             len(mpi_names), len(mpix_names), OUT_REL))
    assert len(stubs) + len(implemented) + len(hand) == total
    if half:
        print("unsupported.py: warning: only one of MPI_X/PMPI_X is defined by hand, add the other: "
              + " ".join(sorted(half)), file=sys.stderr)
    if no_pmpi:
        print("unsupported.py: note: exported without a PMPI_ name (the macro emits one anyway): "
              + " ".join(no_pmpi), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

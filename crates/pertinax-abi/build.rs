//! The library is loaded by the name the MPICH ABI gives it.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi.so.12");
}

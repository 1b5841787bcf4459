//! What the offload programs (`pertinax-offhello`, `pertinax-nbody`,
//! `pertinax-fwi`) share: one program in both roles.

use std::process::ExitCode;

use pertinax::Universe;
use pertinax_offload::Registry;

/// Starts pertinax; a booster serves `reg` and never returns; a master
/// parses its arguments and runs `run`, whose `Ok(true)` (the result
/// verified) is exit status 0, `Ok(false)` or an error (on stderr,
/// prefixed with `name`) status 1.
pub fn offload_main<A: clap::Parser>(
    name: &str,
    reg: impl FnOnce() -> Registry,
    run: impl FnOnce(&Universe, &A) -> anyhow::Result<bool>,
) -> ExitCode {
    let universe = match pertinax::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("{name}: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let reg = reg();
    if pertinax_offload::is_booster(&universe) {
        pertinax_offload::booster_main(universe, &reg);
    }
    let args = A::parse();
    let code = match run(&universe, &args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{name}: {e:#}");
            ExitCode::FAILURE
        }
    };
    let _ = universe.finalize();
    code
}

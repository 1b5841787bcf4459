//! `-np`: mpirun's spelling of `--np`, rewritten among `pertinax run`'s
//! own options before clap reads the command line; so are mpiexec's
//! `-wdir`, `-host`, `-hosts` and `-initial-errhandler`.

use std::ffi::OsString;

use clap::CommandFactory;

use super::Cli;

/// The arguments of `pertinax` with mpirun's `-np` rewritten to `--np`,
/// among `pertinax run`'s own options only: the rewriting stops at `--` or
/// at the program (and starts again after a `:` that begins another
/// application context), so a program's own `-np` is passed on untouched.
/// (clap would read `-np 4` as `-n p`, then fail on `4`.)
pub fn normalize(args: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    for a in it.by_ref() {
        let is_run = a == "run";
        out.push(a);
        if is_run {
            out.extend(rewrite_np(it.collect()));
            break;
        }
    }
    out
}

/// The tokens after `run` (or after a `:`) with `-np` rewritten among the
/// launcher's options.
pub(super) fn rewrite_np(args: Vec<OsString>) -> Vec<OsString> {
    let cli = Cli::command();
    let Some(run) = cli.find_subcommand("run") else {
        return args;
    };
    // Whether an option token takes the next token as its value.
    let takes_next = |tok: &str| {
        run.get_arguments().any(|a| {
            let named = match tok.strip_prefix("--") {
                Some(long) => a
                    .get_long_and_visible_aliases()
                    .is_some_and(|names| names.contains(&long)),
                None => tok.len() == 2 && a.get_short() == tok.chars().nth(1),
            };
            named && a.get_action().takes_values() && !a.is_require_equals_set()
        })
    };
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    let mut options = true;
    while let Some(a) = it.next() {
        let tok = a.to_str().map(str::to_owned);
        match tok.as_deref() {
            Some(":") => {
                options = true;
                out.push(a);
            }
            _ if !options => out.push(a),
            Some("--") => {
                options = false;
                out.push(a);
            }
            Some(t) if t.starts_with('-') && t.len() > 1 && !t.contains('=') => {
                // mpiexec's one-dash long options.
                let t = match t {
                    "-np" | "-wdir" | "-host" | "-hosts" | "-initial-errhandler" => format!("-{t}"),
                    _ => t.to_string(),
                };
                if t == a.to_str().unwrap_or_default() {
                    out.push(a);
                } else {
                    out.push(OsString::from(&t));
                }
                if takes_next(&t) {
                    out.extend(it.next());
                }
            }
            Some(t) if t.starts_with('-') && t.len() > 1 => out.push(a),
            // The program.
            _ => {
                options = false;
                out.push(a);
            }
        }
    }
    out
}

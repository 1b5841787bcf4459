//! `pertinax mpicc` and `pertinax mpicxx`: the system's C or C++ compiler
//! (`cc`, `c++`; `PERTINAX_CC`, `PERTINAX_CXX` override, words split at
//! spaces: `PERTINAX_CC="ccache gcc"`) with pertinax's headers and
//! library:
//!
//! ```text
//! cc -I<include> ARGS... -L<lib> -Wl,-rpath,<lib> -lmpi
//! ```
//!
//! (`-l:libmpi.so.12` where the directory has no `libmpi.so`)
//! (no link options when ARGS only compile: `-c`, `-E`, `-S`, `-M`,
//! `-MM`). As MPI compiler wrappers do, `-show` prints the command instead
//! of running it, `-compile-info` and `-link-info` the compile and link
//! halves, `--version` (or `-version`) pertinax's version, where the
//! headers and the library are, then the compiler's `--version`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use crate::abi;

/// Which compiler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// `pertinax mpicc`.
    C,
    /// `pertinax mpicxx`.
    Cxx,
}

impl Lang {
    fn name(self) -> &'static str {
        match self {
            Lang::C => "mpicc",
            Lang::Cxx => "mpicxx",
        }
    }

    /// The compiler and its own leading arguments.
    fn compiler(self) -> Vec<OsString> {
        let (var, default) = match self {
            Lang::C => ("PERTINAX_CC", "cc"),
            Lang::Cxx => ("PERTINAX_CXX", "c++"),
        };
        let words: Vec<OsString> = std::env::var(var)
            .unwrap_or_default()
            .split_whitespace()
            .map(OsString::from)
            .collect();
        if words.is_empty() {
            vec![default.into()]
        } else {
            words
        }
    }
}

/// What the wrapper was asked.
enum Mode {
    Run,
    Show,
    CompileInfo,
    LinkInfo,
    Version,
}

/// Runs the wrapper with the user's `args`; its exit status.
///
/// # Errors
/// When the headers, the library or the compiler cannot be found (one
/// line to print).
pub fn execute(lang: Lang, args: &[OsString]) -> Result<i32, String> {
    let mut mode = Mode::Run;
    let mut user = Vec::new();
    for a in args {
        match a.to_str() {
            Some("-show" | "--show" | "-showme") => mode = Mode::Show,
            Some("-compile-info" | "--compile-info" | "-compile_info") => mode = Mode::CompileInfo,
            Some("-link-info" | "--link-info" | "-link_info") => mode = Mode::LinkInfo,
            Some("--version" | "-version") => mode = Mode::Version,
            _ => user.push(a.clone()),
        }
    }
    let compiler = lang.compiler();
    if let Mode::Version = mode {
        println!("pertinax {} {}", lang.name(), env!("CARGO_PKG_VERSION"));
        match abi::include_dir() {
            Ok(d) => println!("headers: {}", d.display()),
            Err(e) => println!("headers: not found: {e}"),
        }
        match abi::lib_dir() {
            Ok(d) => println!("library: {}", d.join(abi::SONAME).display()),
            Err(e) => println!("library: not found: {e}"),
        }
        return spawn(&compiler, &["--version".into()]);
    }
    let include = abi::include_dir()?;
    let lib = abi::lib_dir()?;
    let compile = vec![flag("-I", &include)];
    let link = vec![
        flag("-L", &lib),
        flag("-Wl,-rpath,", &lib),
        // `-lmpi` finds `libmpi.so`; a directory with only the soname
        // (an installed layout) is linked by file name.
        OsString::from(if lib.join("libmpi.so").exists() {
            "-lmpi"
        } else {
            "-l:libmpi.so.12"
        }),
    ];
    let compile_only = user.iter().any(|a| {
        a.to_str()
            .is_some_and(|a| matches!(a, "-c" | "-E" | "-S" | "-M" | "-MM"))
    });
    let mut cmd = compile.clone();
    cmd.extend(user);
    if !compile_only {
        cmd.extend(link.clone());
    }
    let shown = |extra: Vec<OsString>| {
        let line: Vec<String> = compiler.iter().chain(&extra).map(quote).collect();
        println!("{}", line.join(" "));
        Ok(0)
    };
    match mode {
        Mode::Show => shown(cmd),
        Mode::CompileInfo => shown(compile),
        Mode::LinkInfo => shown(link),
        Mode::Run | Mode::Version => spawn(&compiler, &cmd),
    }
}

fn flag(prefix: &str, dir: &std::path::Path) -> OsString {
    let mut f = OsString::from(prefix);
    f.push(dir.as_os_str());
    f
}

/// Runs `compiler args`; its exit status (128 + signal if killed).
fn spawn(compiler: &[OsString], args: &[OsString]) -> Result<i32, String> {
    let (prog, lead) = compiler
        .split_first()
        .ok_or_else(|| "no compiler".to_string())?;
    let status = Command::new(prog)
        .args(lead)
        .args(args)
        .status()
        .map_err(|e| {
            format!(
                "cannot run {}: {e} (set PERTINAX_CC or PERTINAX_CXX)",
                PathBuf::from(prog).display()
            )
        })?;
    Ok(status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + status.signal().unwrap_or(0)
    }))
}

/// `a` as a shell word (single-quoted when it holds anything else than
/// letters, digits and `-_./=,:+@%`).
fn quote(a: &OsString) -> String {
    let s = a.to_string_lossy();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(super::quote(&OsString::from("-O2")), "-O2");
        assert_eq!(
            super::quote(&OsString::from("-Wl,-rpath,/a b")),
            "'-Wl,-rpath,/a b'"
        );
        assert_eq!(super::quote(&OsString::from("it's")), r"'it'\''s'");
    }
}

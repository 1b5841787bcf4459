//! `pertinax-bench`: measures pertinax (and Open MPI, where installed).
use anyhow::Result;

mod worker;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let u = pertinax::init()?;
    let w = u.world();
    let sizes: Vec<usize> = vec![0, 8, 1024, 8192, 16384, 65536, 1 << 20, 4 << 20];
    let pp = args.first().map(|s| s.as_str()) == Some("pingping");
    worker::pingpong(&w, &sizes, 1000, 100, 7, pp)?;
    u.finalize()?;
    Ok(())
}

use pertinax::CommunicatorExt as _;
use pertinax::{Op, Rank, Tag};
fn main() -> Result<(), pertinax::Error> {
    let u = pertinax::init()?;
    let w = u.world();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100000);
    let mut buf = [0u8; 8];
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        w.send(&buf, Rank(0), Tag(1))?;
        w.recv(&mut buf, Rank(0), Tag(1))?;
    }
    let t1 = std::time::Instant::now();
    let mut s = 0i64;
    let mut x = [1i32];
    let op = Op::sum();
    for _ in 0..n {
        let y = x;
        w.allreduce(&y, &mut x, &op)?;
        s += x[0] as i64;
    }
    let t2 = std::time::Instant::now();
    println!(
        "SELF sendrecv_ns={:.1} allreduce_ns={:.1} {}",
        (t1 - t0).as_nanos() as f64 / n as f64,
        (t2 - t1).as_nanos() as f64 / n as f64,
        s
    );
    Ok(())
}

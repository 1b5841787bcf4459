use pertinax::CommunicatorExt as _;
use pertinax::{Communicator as _, Op, Rank};
fn main() -> Result<(), pertinax::Error> {
    let u = pertinax::init()?;
    let w = u.world();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100000);
    let mut buf = [0u8; 8];
    let (x, mut y) = ([1i32], [0i32]);
    let op = Op::sum();
    let mut s = 0i64;
    for _ in 0..n {
        w.bcast(&mut buf, Rank(0))?;
        w.barrier()?;
        w.reduce(&x, &mut y, &op, Rank(0))?;
        s += y[0] as i64;
    }
    println!("{s}");
    Ok(())
}

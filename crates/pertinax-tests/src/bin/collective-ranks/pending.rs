//! The `pending` scenario: blocking collectives while this rank has
//! point-to-point receives and an agreement pending that its peers wait
//! for. MPI promises progress on a posted receive while its process blocks
//! in another call; the MPI backend matches unmatched receives itself and
//! runs blocking collectives as MPI's blocking calls, so this holds there
//! only through the progress it runs inside MPI's (`pertinax-mpi-sys`,
//! `hook.rs`).

use pertinax::{Communicator as _, CommunicatorExt as _};
use pertinax::{Op, Universe};
use pertinax_tests::{arg, check, e};

use super::R;

/// Bytes of the large message: well past every eager limit, so that its
/// sender waits until the receive has matched it.
const LARGE: usize = 1 << 20;
/// Bytes of the synchronous any-source message.
const SYNC: usize = 64 << 10;
/// Flags of the agreement: above the MPI backend's fast round, so that
/// its members exchange records, whose steps this backend runs.
const FLAGS: u32 = 0xF0F0_F0F0;

fn fill(n: usize, it: usize, salt: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_mul(31) ^ it ^ salt as usize) as u8)
        .collect()
}

/// `pending ITERS`: each iteration, rank 0 posts a receive of a 1 MiB
/// message from rank 1 and an any-source receive of 64 KiB, and starts a
/// non-blocking agreement on a duplicate of the world; then every rank
/// runs a blocking allreduce, barrier and bcast; rank 0 waits for its
/// three operations last. Meanwhile rank 1 sends the 1 MiB message and
/// the last rank synchronously sends the 64 KiB one (both wait for rank
/// 0's receives to match them), and every other rank makes the agreement
/// a blocking call, all before the collectives. Every value is checked.
pub(super) fn pending(u: &Universe, a: &[String]) -> R {
    let iters = arg(a, 0, 20) as usize;
    let w = u.world();
    let (n, me) = (w.size(), w.rank().index());
    check!(n >= 2, "pending needs 2 ranks");
    let d = w.dup().map_err(e)?;
    let last = n - 1;
    for it in 0..iters {
        let mut sum = [me as u64 + it as u64];
        let mut b = [0u64];
        if me == 0 {
            b[0] = 7 * it as u64 + 3;
        }
        if me == 0 {
            let mut big = vec![0u8; LARGE];
            let mut sync = vec![0u8; SYNC];
            let ag = d.iagree(FLAGS).map_err(e)?;
            pertinax::scope(|s| -> R {
                let rb = w.irecv(s, &mut big, 1, 5).map_err(e)?;
                let rs = w.irecv(s, &mut sync, pertinax::Source::Any, 9).map_err(e)?;
                w.allreduce_in_place(&mut sum, &Op::sum()).map_err(e)?;
                w.barrier().map_err(e)?;
                w.bcast(&mut b, 0).map_err(e)?;
                rb.wait().map_err(e)?;
                let st = rs.wait().map_err(e)?.status;
                check!(
                    st.is_some_and(|st| st.source.index() == last),
                    "iteration {it}: the synchronous message's status {st:?}"
                );
                Ok(())
            })?;
            let got = ag.wait().map_err(e)?;
            check!(
                got.flags == FLAGS && got.failed.is_empty(),
                "iteration {it}: agreement {got:?}"
            );
            check!(big == fill(LARGE, it, 1), "iteration {it}: 1 MiB message");
            check!(sync == fill(SYNC, it, 2), "iteration {it}: 64 KiB message");
        } else {
            if me == 1 {
                w.send(&fill(LARGE, it, 1), 0, 5).map_err(e)?;
            }
            if me == last {
                w.ssend(&fill(SYNC, it, 2), 0, 9).map_err(e)?;
            }
            let f = d.agree(FLAGS).map_err(e)?;
            check!(f == FLAGS, "iteration {it}: agreement {f:#x}");
            w.allreduce_in_place(&mut sum, &Op::sum()).map_err(e)?;
            w.barrier().map_err(e)?;
            w.bcast(&mut b, 0).map_err(e)?;
        }
        let want = (0..n as u64).sum::<u64>() + (n * it) as u64;
        check!(
            sum[0] == want,
            "iteration {it}: allreduce {} != {want}",
            sum[0]
        );
        check!(b[0] == 7 * it as u64 + 3, "iteration {it}: bcast {}", b[0]);
    }
    Ok(())
}

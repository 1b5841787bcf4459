//! `vops ROUNDS [agree|log|hier]`: the collectives with per-rank counts or
//! per-rank results. Every round (root `k mod N`) runs scan, exscan,
//! reduce_scatter, gatherv, scatterv, allgatherv, alltoallv (under `log`
//! and on the hierarchy, `hier`: it must return `Error::Unsupported`) and
//! a barrier, with fault points
//! `res.before.OP` and `res.after.OP` around each. Every result is checked
//! exactly against the values of the ranks the outcome says contributed;
//! the blocks of the missing ranks, and the gaps between blocks, must
//! still hold what was there before the call; the lowest survivor's
//! exscan must leave its buffer alone. The digest covers what must be the
//! same at every survivor: every outcome under `agree` and `hier`; under `log`
//! (where a laggard repeats scan, exscan and reduce_scatter over the
//! survivors at the repair while the others keep what they got, and
//! whether a dead root was skipped is each rank's own) the allgatherv's
//! outcome and result.

use pertinax::{Op, Rank};
use pertinax_resilient::{Communicator, CommunicatorExt, Error, Outcome};
use pertinax_tests::check;

use crate::{check_dead, e, point, val, Digest};

/// What an untouched element holds.
const UNTOUCHED: u64 = u64::MAX;

/// The count of rank `r` in round `k` (1 to 3 elements).
fn cnt(r: usize, k: u64) -> usize {
    1 + (r + k as usize) % 3
}

/// Counts and displacements with one element of gap before every block.
fn gapped(n: usize, k: u64) -> (Vec<usize>, Vec<usize>, usize) {
    let counts: Vec<usize> = (0..n).map(|r| cnt(r, k)).collect();
    let mut displs = Vec::with_capacity(n);
    let mut at = 0;
    for &c in &counts {
        displs.push(at + 1);
        at += c + 1;
    }
    (counts, displs, at)
}

/// Whether original rank `r` contributed (is not missing).
fn counted(o: &Outcome, r: usize) -> bool {
    !o.missing.contains(&Rank(r as i32))
}

/// Checks a gathered buffer laid out by `gapped`: contributors' blocks
/// hold `v(r, i)`, everything else is untouched.
fn check_gapped(
    got: &[u64],
    o: &Outcome,
    counts: &[usize],
    displs: &[usize],
    v: impl Fn(usize, usize) -> u64,
    what: &str,
) -> Result<(), String> {
    let mut want = vec![UNTOUCHED; got.len()];
    for r in (0..counts.len()).filter(|&r| counted(o, r)) {
        for i in 0..counts[r] {
            want[displs[r] + i] = v(r, i);
        }
    }
    check!(got == want, "{what}: got {got:?}, want {want:?} ({o:?})");
    Ok(())
}

pub(crate) fn vops<C: Communicator<Error = Error>>(
    w: &C,
    rounds: u64,
    mode: &str,
    d: &mut Digest,
) -> Result<(), String> {
    let log = mode == "log";
    let alltoallv = mode == "agree";
    let n = w.size();
    let me = w.rank().index();
    // Under `agree` every outcome is the same at every survivor.
    let uniform = |d: &mut Digest, o: &Outcome| {
        if !log {
            d.outcome(o);
        }
    };
    for k in 0..rounds {
        let root = (k as usize) % n;
        point("res.vops.round");

        // scan (two elements: val and val + 1)
        point("res.before.scan");
        let x = val(me, k, 10);
        let mut s = [0u64; 2];
        let o = w.scan(&[x, x + 1], &mut s, &Op::sum()).map_err(e)?;
        check_dead(w, &o, k, "scan")?;
        let want: u64 = (0..=me)
            .filter(|&r| counted(&o, r))
            .map(|r| val(r, k, 10))
            .sum();
        let m = (0..=me).filter(|&r| counted(&o, r)).count() as u64;
        check!(
            s == [want, want + m],
            "round {k} scan: got {s:?}, want [{want}, {}] ({o:?})",
            want + m
        );
        uniform(d, &o);
        point("res.after.scan");

        // exscan: untouched at the lowest contributor
        point("res.before.exscan");
        let mut s = [UNTOUCHED; 2];
        let o = w
            .exscan(&[val(me, k, 11), 1], &mut s, &Op::sum())
            .map_err(e)?;
        check_dead(w, &o, k, "exscan")?;
        let below: Vec<usize> = (0..me).filter(|&r| counted(&o, r)).collect();
        let want = if below.is_empty() {
            [UNTOUCHED; 2]
        } else {
            [
                below.iter().map(|&r| val(r, k, 11)).sum(),
                below.len() as u64,
            ]
        };
        check!(
            s == want,
            "round {k} exscan: got {s:?}, want {want:?} ({o:?})"
        );
        uniform(d, &o);
        point("res.after.exscan");

        // reduce_scatter: block of rank j, element i, from rank r is
        // val(r) + 100 j + i
        point("res.before.reduce_scatter");
        let counts: Vec<usize> = (0..n).map(|r| cnt(r, k)).collect();
        let send: Vec<u64> = (0..n)
            .flat_map(|j| (0..counts[j]).map(move |i| val(me, k, 12) + 100 * j as u64 + i as u64))
            .collect();
        let mut s = vec![0u64; counts[me]];
        let o = w
            .reduce_scatter(&send, &mut s, &counts, &Op::sum())
            .map_err(e)?;
        check_dead(w, &o, k, "reduce_scatter")?;
        let contributors: Vec<usize> = (0..n).filter(|&r| counted(&o, r)).collect();
        let want: Vec<u64> = (0..counts[me])
            .map(|i| {
                contributors
                    .iter()
                    .map(|&r| val(r, k, 12) + 100 * me as u64 + i as u64)
                    .sum()
            })
            .collect();
        check!(
            s == want,
            "round {k} reduce_scatter: got {s:?}, want {want:?} ({o:?})"
        );
        uniform(d, &o);
        point("res.after.reduce_scatter");

        // gatherv at root, blocks with gaps
        point("res.before.gatherv");
        let (counts, displs, total) = gapped(n, k);
        let mine: Vec<u64> = (0..counts[me]).map(|i| val(me, k, 13) + i as u64).collect();
        let mut g = vec![UNTOUCHED; if me == root { total } else { 0 }];
        let o = w
            .gatherv(&mine, &mut g, &counts, &displs, root)
            .map_err(e)?;
        if me == root {
            check_dead(w, &o, k, "gatherv")?;
            check_gapped(
                &g,
                &o,
                &counts,
                &displs,
                |r, i| val(r, k, 13) + i as u64,
                &format!("round {k} gatherv"),
            )?;
        }
        // Whether the root was skipped is the same everywhere under agree
        // (under log a non-root may have sent its block and returned
        // before the root's death was known).
        if !log {
            d.add(u64::from(o.skipped.is_some()));
        }
        if me != root && o.skipped.is_some() {
            check!(
                o.skipped == Some(Rank(root as i32))
                    && w.failed_ranks().contains(&Rank(root as i32)),
                "round {k} gatherv skipped the live root ({o:?})"
            );
        }
        point("res.after.gatherv");

        // scatterv from root, blocks with gaps (the gaps hold junk)
        point("res.before.scatterv");
        let src: Vec<u64> = if me == root {
            let mut v = vec![7u64; total];
            for r in 0..n {
                for i in 0..counts[r] {
                    v[displs[r] + i] = val(r, k, 14) + i as u64;
                }
            }
            v
        } else {
            Vec::new()
        };
        let mut s = vec![UNTOUCHED; counts[me]];
        let o = w
            .scatterv(&src, &counts, &displs, &mut s, root)
            .map_err(e)?;
        if o.skipped.is_none() {
            let want: Vec<u64> = (0..counts[me]).map(|i| val(me, k, 14) + i as u64).collect();
            check!(s == want, "round {k} scatterv: got {s:?}, want {want:?}");
        } else {
            check!(
                o.skipped == Some(Rank(root as i32))
                    && w.failed_ranks().contains(&Rank(root as i32)),
                "round {k} scatterv skipped the live root ({o:?})"
            );
        }
        // Whether the root was skipped is the same everywhere under agree
        // (the missing list is the root's alone, as for scatter).
        if !log {
            d.add(u64::from(o.skipped.is_some()));
        }
        point("res.after.scatterv");

        // allgatherv, blocks with gaps
        point("res.before.allgatherv");
        let mine: Vec<u64> = (0..counts[me]).map(|i| val(me, k, 15) + i as u64).collect();
        let mut g = vec![UNTOUCHED; total];
        let o = w.allgatherv(&mine, &mut g, &counts, &displs).map_err(e)?;
        check_dead(w, &o, k, "allgatherv")?;
        check_gapped(
            &g,
            &o,
            &counts,
            &displs,
            |r, i| val(r, k, 15) + i as u64,
            &format!("round {k} allgatherv"),
        )?;
        d.outcome(&o);
        for x in &g {
            d.add(*x);
        }
        point("res.after.allgatherv");

        // alltoallv: rank r sends 1 + (r + j) % 2 elements to rank j,
        // received with a gap before every block
        point("res.before.alltoallv");
        let c = |r: usize, j: usize| 1 + (r + j) % 2;
        let scounts: Vec<usize> = (0..n).map(|j| c(me, j)).collect();
        let sdispls: Vec<usize> = scounts
            .iter()
            .scan(0, |a, &x| {
                let at = *a;
                *a += x;
                Some(at)
            })
            .collect();
        let send: Vec<u64> = (0..n)
            .flat_map(|j| (0..c(me, j)).map(move |i| val(me, k, 16 + j as u64) + i as u64))
            .collect();
        let rcounts: Vec<usize> = (0..n).map(|r| c(r, me)).collect();
        let mut rdispls = Vec::with_capacity(n);
        let mut at = 0;
        for &x in &rcounts {
            rdispls.push(at + 1);
            at += x + 1;
        }
        let mut g = vec![UNTOUCHED; at];
        let r = w.alltoallv(&send, &scounts, &sdispls, &mut g, &rcounts, &rdispls);
        match r {
            Err(Error::Unsupported(_)) if !alltoallv => {}
            r => {
                let o = r.map_err(e)?;
                check_dead(w, &o, k, "alltoallv")?;
                check_gapped(
                    &g,
                    &o,
                    &rcounts,
                    &rdispls,
                    |r, i| val(r, k, 16 + me as u64) + i as u64,
                    &format!("round {k} alltoallv"),
                )?;
                uniform(d, &o);
            }
        }
        point("res.after.alltoallv");

        point("res.before.barrier");
        w.barrier().map_err(e)?;
        point("res.after.barrier");
    }
    Ok(())
}

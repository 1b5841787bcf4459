//! A user-shaped program: an iterative 2-D Jacobi solver with buddy
//! checkpoints that recovers from deaths by non-shrinking recovery,
//! `jacobi-ranks ROWS_PER_RANK COLS ITERS EVERY`.
//!
//! The grid of `size * ROWS_PER_RANK` rows and `COLS` columns (inside a
//! fixed boundary) is cut into blocks of rows, one per rank. Every
//! iteration exchanges the halo rows with the neighbours and updates each
//! point from its four neighbours. Every `EVERY` iterations (and after the
//! last) comes a *sync point*: each rank sends a copy of its block to its
//! buddy (the next rank, cyclically), and all agree on whether everyone
//! got there without error; if so, the block and the buddy's copy become
//! the committed checkpoint (the same iteration at every survivor, since
//! the agreement is uniform).
//!
//! A rank that sees a failure revokes the communicator, so that everyone
//! reaches the sync point's agreement, which then fails; the survivors call
//! `replace_failed_with(checkpoint iteration)`. A replacement learns the
//! iteration from the survivors' values in `Role::Replacement`, receives
//! its block from its buddy and the copy it keeps from the rank before it;
//! everyone rolls back to the checkpoint, and the restore ends with an
//! agreement (a death during the restore starts another recovery).
//!
//! At the end, rank 0 gathers the grid, computes the same iterations
//! sequentially, and compares the two bit for bit. Every rank prints
//! `OK jacobi rank=R ...` (rank 0 adds `bitwise-equal` and a checksum) or
//! `FAIL ...`. Fault points: `iter` (each iteration), `ckpt` (before the
//! buddy copy), `restore` (before the restore's transfers).

use pertinax::CommunicatorExt as _;
use pertinax::{Comm, Error, Role};
use pertinax_harness::{report, setup};

/// One rank's part of the grid: `rows` rows of `cols` points, plus a halo
/// row above and below, and a boundary column on each side.
#[derive(Clone, Debug)]
struct Block {
    rows: usize,
    cols: usize,
    /// `(rows + 2) * (cols + 2)` values, row-major.
    u: Vec<f64>,
}

/// The fixed boundary and the initial interior, the same for the parallel
/// and the sequential solver. `i` is the global row (-1 and `g` are the
/// boundary rows), `j` the column (-1 and `cols` are the boundary columns).
fn initial(i: i64, j: i64, g: i64, cols: i64) -> f64 {
    if i < 0 {
        1.0 + j as f64 * 0.01
    } else if i >= g {
        0.5
    } else if j < 0 {
        0.25
    } else if j >= cols {
        0.75 - i as f64 * 0.001
    } else {
        ((i * 7 + j * 13) % 17) as f64 / 17.0
    }
}

impl Block {
    /// The initial block of the rank owning global rows `lo..lo + rows`.
    fn new(lo: usize, rows: usize, cols: usize, g: usize) -> Block {
        let mut u = Vec::with_capacity((rows + 2) * (cols + 2));
        for i in 0..rows + 2 {
            for j in 0..cols + 2 {
                u.push(initial(
                    lo as i64 + i as i64 - 1,
                    j as i64 - 1,
                    g as i64,
                    cols as i64,
                ));
            }
        }
        Block { rows, cols, u }
    }

    fn w(&self) -> usize {
        self.cols + 2
    }

    /// Interior row `r` (0-based) or halo row (`r` = -1 or `rows`), with
    /// its boundary columns.
    fn row(&self, r: i64) -> &[f64] {
        let s = (r + 1) as usize * self.w();
        &self.u[s..s + self.w()]
    }

    fn row_mut(&mut self, r: i64) -> &mut [f64] {
        let w = self.w();
        let s = (r + 1) as usize * w;
        &mut self.u[s..s + w]
    }

    /// One Jacobi sweep over the interior (halo rows already exchanged).
    fn sweep(&mut self) {
        let w = self.w();
        let mut next = self.u.clone();
        for i in 1..=self.rows {
            for j in 1..=self.cols {
                next[i * w + j] = 0.25
                    * ((self.u[(i - 1) * w + j] + self.u[(i + 1) * w + j])
                        + (self.u[i * w + j - 1] + self.u[i * w + j + 1]));
            }
        }
        self.u = next;
    }

    /// The interior rows (what a checkpoint keeps).
    fn interior(&self) -> Vec<f64> {
        self.u[self.w()..(self.rows + 1) * self.w()].to_vec()
    }

    fn set_interior(&mut self, v: &[f64]) {
        let w = self.w();
        self.u[w..(self.rows + 1) * w].copy_from_slice(v);
    }
}

/// The sequential solver: the whole grid, `iters` sweeps.
fn sequential(g: usize, cols: usize, iters: u64) -> Vec<f64> {
    let mut b = Block::new(0, g, cols, g);
    for _ in 0..iters {
        b.sweep();
    }
    b.interior()
}

/// The committed checkpoint: the iteration, this rank's interior and its
/// copy of the previous rank's (cyclically) interior.
#[derive(Clone, Debug)]
struct Ckpt {
    it: u64,
    mine: Vec<f64>,
    buddy: Vec<f64>,
}

fn arg(a: &[String], i: usize, default: u64) -> u64 {
    a.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// A fault (the rank goes to the sync point's agreement) or the end of
/// the program with a message.
enum Stop {
    Fault,
    Fatal(String),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        if e.is_fault() {
            Stop::Fault
        } else {
            Stop::Fatal(e.to_string())
        }
    }
}

/// Exchanges the halo rows with the neighbours above and below.
fn halo(c: &Comm, b: &mut Block) -> Result<(), Error> {
    let (me, n) = (c.rank().index(), c.size());
    let rows = b.rows as i64;
    // Downwards: my last row to the rank below, my top halo from above.
    let last = b.row(rows - 1).to_vec();
    let mut top = vec![0.0; b.w()];
    match (me > 0, me + 1 < n) {
        (true, true) => c
            .sendrecv(&last, me + 1, 1, &mut top, me - 1, 1)
            .map(|_| ())?,
        (false, true) => c.send(&last, me + 1, 1).map(drop)?,
        (true, false) => c.recv(&mut top, me - 1, 1).map(|_| ())?,
        (false, false) => {}
    }
    // Upwards: my first row to the rank above, my bottom halo from below.
    let first = b.row(0).to_vec();
    let mut bottom = vec![0.0; b.w()];
    match (me > 0, me + 1 < n) {
        (true, true) => c
            .sendrecv(&first, me - 1, 2, &mut bottom, me + 1, 2)
            .map(|_| ())?,
        (true, false) => c.send(&first, me - 1, 2).map(drop)?,
        (false, true) => c.recv(&mut bottom, me + 1, 2).map(|_| ())?,
        (false, false) => {}
    }
    if me > 0 {
        b.row_mut(-1).copy_from_slice(&top);
    }
    if me + 1 < n {
        b.row_mut(rows).copy_from_slice(&bottom);
    }
    Ok(())
}

/// Iterations from `b`'s state at `it` up to `to`, then the buddy copy:
/// the copy of the previous rank's block, or a fault.
fn segment(c: &Comm, b: &mut Block, it: &mut u64, to: u64) -> Result<Vec<f64>, Stop> {
    while *it < to {
        pertinax::fault_point("iter");
        halo(c, b)?;
        b.sweep();
        *it += 1;
    }
    pertinax::fault_point("ckpt");
    let (me, n) = (c.rank().index(), c.size());
    let mine = b.interior();
    let mut prev = vec![0.0; mine.len()];
    c.sendrecv(&mine, (me + 1) % n, 3, &mut prev, (me + n - 1) % n, 3)?;
    Ok(prev)
}

/// Gives every rank that lacks the checkpoint (`!have`) its block (from
/// its buddy, the next rank) and its buddy copy (the previous rank's own
/// block). Ranks that have it only send, ranks that lack it only receive.
fn restore(c: &Comm, k: &mut Ckpt, have: &mut bool) -> Result<(), Stop> {
    let (me, n) = (c.rank().index(), c.size());
    let mut all = vec![0u8; n];
    c.allgather(&[*have as u8], &mut all)?;
    for r in 0..n {
        if all[r] == 0 && (all[(r + 1) % n] == 0 || all[(r + n - 1) % n] == 0) {
            return Err(Stop::Fatal(format!(
                "rank {r} and a neighbour both lost the checkpoint: the buddy scheme cannot \
                 restore it (holders {all:?})"
            )));
        }
    }
    pertinax::fault_point("restore");
    if *have {
        let prev = (me + n - 1) % n;
        if all[prev] == 0 {
            c.send(&k.buddy, prev, 11)?;
        }
        let next = (me + 1) % n;
        if all[next] == 0 {
            c.send(&k.mine, next, 12)?;
        }
    } else {
        c.recv(&mut k.mine, (me + 1) % n, 11)?;
        c.recv(&mut k.buddy, (me + n - 1) % n, 12)?;
        *have = true;
    }
    Ok(())
}

/// Whether an agreement says that every member did its part.
fn all_good(c: &Comm, ok: bool) -> Result<bool, Stop> {
    let d = c
        .agree_detailed(ok as u32)
        .map_err(|e| Stop::Fatal(e.to_string()))?;
    Ok(d.flags == 1 && d.failed.is_empty())
}

fn run(u: &pertinax::Universe, a: &[String]) -> Result<String, String> {
    let rows = arg(a, 0, 16) as usize;
    let cols = arg(a, 1, 48) as usize;
    let iters = arg(a, 2, 120);
    let every = arg(a, 3, 10).max(1);
    let mut c = u.world();
    let (me, n) = (c.rank().index(), c.size());
    let g = rows * n;
    let mut b = Block::new(me * rows, rows, cols, g);
    let len = rows * (cols + 2);
    let fatal = |s: Stop| match s {
        Stop::Fatal(m) => m,
        Stop::Fault => "a fault where none is expected".to_string(),
    };
    // The committed checkpoint, whether this rank holds it, and whether
    // the ranks are restoring it.
    let (mut k, mut have, mut restoring) = match u.role() {
        Role::Replacement {
            rank,
            replaced,
            values,
            ..
        } => {
            if !replaced.contains(&rank) {
                return Err(format!("replacement of {rank} told replaced={replaced:?}"));
            }
            let v: Vec<u64> = values.iter().flatten().copied().collect();
            if v.is_empty() || v.windows(2).any(|p| p[0] != p[1]) {
                return Err(format!(
                    "the survivors passed different iterations: {values:?}"
                ));
            }
            let k = Ckpt {
                it: v[0],
                mine: vec![0.0; len],
                buddy: vec![0.0; len],
            };
            (k, false, true)
        }
        _ => {
            let prev = (me + n - 1) % n;
            let k = Ckpt {
                it: 0,
                mine: b.interior(),
                buddy: Block::new(prev * rows, rows, cols, g).interior(),
            };
            (k, true, false)
        }
    };
    let mut it = k.it;
    let mut recoveries = 0u32;
    let mut replaced_all: Vec<usize> = Vec::new();
    // What rank 0 gathered at the last sync point.
    let mut gathered: Vec<f64> = Vec::new();
    loop {
        let step = if restoring {
            restore(&c, &mut k, &mut have).map(|()| Vec::new())
        } else {
            let to = (it + every).min(iters);
            segment(&c, &mut b, &mut it, to).and_then(|prev| {
                if it == iters {
                    // The last sync point also gathers the result, so that
                    // its agreement covers it.
                    gathered = if c.rank().index() == 0 {
                        vec![0.0; len * n]
                    } else {
                        Vec::new()
                    };
                    c.gather(&b.interior(), &mut gathered, 0)?;
                }
                Ok(prev)
            })
        };
        let ok = match step {
            Ok(prev) => Some(prev),
            Err(Stop::Fault) => {
                c.revoke().map_err(|e| e.to_string())?;
                None
            }
            Err(s) => return Err(fatal(s)),
        };
        let good = all_good(&c, ok.is_some()).map_err(fatal)?;
        match (good, restoring, ok) {
            (true, true, _) => {
                // Everyone holds the checkpoint again: roll back to it.
                restoring = false;
                b.set_interior(&k.mine);
                it = k.it;
            }
            (true, false, Some(prev)) => {
                k = Ckpt {
                    it,
                    mine: b.interior(),
                    buddy: prev,
                };
                if it == iters {
                    break;
                }
            }
            _ => {
                // Recovery: replace the dead, hand them the checkpoint's
                // iteration, and restore it everywhere.
                let r = c.replace_failed_with(k.it).map_err(|e| e.to_string())?;
                if r.values.iter().flatten().any(|&v| v != k.it) {
                    return Err(format!(
                        "survivors at checkpoint {} got values {:?}",
                        k.it, r.values
                    ));
                }
                replaced_all.extend(r.replaced.iter().map(|x| x.index()));
                c = r.comm;
                recoveries += 1;
                restoring = true;
            }
        }
    }
    // How the launcher started this process: a replacement is a spare
    // (`--spares`) or a new process.
    let how = std::env::var(pertinax_wire::env::ROLE).unwrap_or_default();
    let role = match u.role() {
        Role::Original => "original".to_string(),
        _ => format!("replacement({how})"),
    };
    replaced_all.sort_unstable();
    let tail = format!("role={role} recoveries={recoveries} replaced={replaced_all:?}");
    if c.rank().index() != 0 {
        return Ok(tail);
    }
    let all = gathered;
    let seq = sequential(g, cols, iters);
    // The gathered interiors include each block's boundary columns, as
    // the sequential grid's rows do: compare everything.
    let diff = all
        .iter()
        .zip(&seq)
        .position(|(x, y)| x.to_bits() != y.to_bits());
    if all.len() != seq.len() {
        return Err(format!(
            "{} values gathered, {} expected",
            all.len(),
            seq.len()
        ));
    }
    if let Some(i) = diff {
        return Err(format!(
            "differs from the sequential result at value {i}: {} vs {}",
            all[i], seq[i]
        ));
    }
    let sum = seq.iter().fold(0u64, |h, x| h.rotate_left(5) ^ x.to_bits());
    Ok(format!("bitwise-equal checksum={sum:016x} {tail}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let u = setup("jacobi init", pertinax::init());
    let rank = u.world().rank().index();
    report("jacobi", rank, run(&u, &args)).or_exit();
    drop(u);
}

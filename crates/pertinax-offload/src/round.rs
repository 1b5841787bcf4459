//! The end of a progress round: requests posted for several messages,
//! one of which completed, must all be settled before their scope ends.
//!
//! A dropped receive is not always cancelled by a backend (the MPI
//! backend keeps it posted, and the scope waits for it for ever), and a
//! dropped receive that matched loses its message. So every round cancels
//! the others explicitly and completes those that cannot be cancelled.

/// Cancels every active request but `skip`; completes those that cannot
/// be cancelled (they matched) and returns their indices.
pub(crate) fn cancel_rest(
    reqs: &mut [pertinax::PendingOp<'_>],
    skip: Option<usize>,
) -> Result<Vec<usize>, pertinax::Error> {
    let mut matched = Vec::new();
    let mut first_err = None;
    for (j, req) in reqs.iter_mut().enumerate() {
        if Some(j) == skip || !req.is_active() {
            continue;
        }
        match req.cancel() {
            Ok(true) => {}
            Ok(false) => loop {
                match req.test() {
                    Ok(Some(_)) => {
                        matched.push(j);
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        first_err.get_or_insert(e);
                        break;
                    }
                }
            },
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(matched),
    }
}

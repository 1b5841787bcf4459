//! The local loops of `conj_grad` and of the outer iteration, and the
//! one-process reference that chains them.
//!
//! Each loop runs over the local columns in increasing order and adds up
//! left to right, as the reference does, so a rank's partial sums are
//! NPB's bit for bit.

use super::{makea, CgError, Class, Layout};

/// Inner iterations of one `conj_grad` call (`cgitmax`).
pub const CGITMAX: usize = 25;

/// `sum_j a[j] * b[j]`, left to right.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |s, (x, y)| s + x * y)
}

/// `sum_j (x[j] - y[j])^2`, left to right (the residual's square norm).
pub fn dist2(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).fold(0.0, |s, (a, b)| {
        let d = a - b;
        s + d * d
    })
}

/// `z += alpha * p` and `r -= alpha * q`, element by element.
pub fn step_zr(alpha: f64, p: &[f64], q: &[f64], z: &mut [f64], r: &mut [f64]) {
    for (((z, r), p), q) in z.iter_mut().zip(r.iter_mut()).zip(p).zip(q) {
        *z += alpha * p;
        *r -= alpha * q;
    }
}

/// `p = r + beta * p`.
pub fn step_p(beta: f64, r: &[f64], p: &mut [f64]) {
    for (p, r) in p.iter_mut().zip(r) {
        *p = r + beta * *p;
    }
}

/// The end of an outer iteration, once `x.z` and `z.z` are summed over
/// the whole vector: zeta = shift + 1 / (x.z), and `x = z / ||z||`.
/// Returns zeta.
pub fn normalize(class: Class, xz: f64, zz: f64, z: &[f64], x: &mut [f64]) -> f64 {
    let inv_norm = 1.0 / zz.sqrt();
    for (x, z) in x.iter_mut().zip(z) {
        *x = inv_norm * z;
    }
    class.shift() + 1.0 / xz
}

/// zeta after each of the class's outer iterations, on one process (a
/// 1 x 1 grid: the reductions and the transpose are the identity). The
/// distributed program on one rank computes the same values bit for bit.
///
/// # Errors
/// None for the classes here (the 1 x 1 layout always exists).
pub fn sequential(class: Class) -> Result<Vec<f64>, CgError> {
    let layout = Layout::new(class.na(), 0, 1)?;
    let m = makea(class, &layout);
    let n = layout.ncols();
    let mut x = vec![1.0; n];
    let (mut z, mut p, mut q, mut r) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut zetas = Vec::new();
    for _ in 0..class.niter() {
        z.fill(0.0);
        r.copy_from_slice(&x);
        p.copy_from_slice(&r);
        let mut rho = dot(&r, &r);
        for _ in 0..CGITMAX {
            m.matvec(&p, &mut q);
            let alpha = rho / dot(&p, &q);
            let rho0 = rho;
            step_zr(alpha, &p, &q, &mut z, &mut r);
            rho = dot(&r, &r);
            step_p(rho / rho0, &r, &mut p);
        }
        let (xz, zz) = (dot(&x, &z), dot(&z, &z));
        zetas.push(normalize(class, xz, zz, &z, &mut x));
    }
    Ok(zetas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_s_verifies_on_one_process() {
        let zetas = sequential(Class::S).expect("class S");
        assert_eq!(zetas.len(), 15);
        let zeta = zetas[14];
        assert!(Class::S.verify(zeta), "zeta {zeta:.13e}");
    }
}

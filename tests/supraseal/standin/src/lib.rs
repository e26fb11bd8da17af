//! A CPU stand-in for supraseal-c2 0.1, for tests only: the crate's Rust API as bellperson
//! 0.27's `cuda-supraseal` prover uses it (`SRS`, `Assignment`, `generate_groth16_proofs`),
//! with a prover that does what supraseal's C++ side does to the same raw parts:
//!
//! - `SRS::try_new` reads a bellperson `.params` file as `groth16_srs.cuh` does (the
//!   verifying key without `ic`, then the H, L, A, B in G1 and B in G2 counts and points),
//!   and fails as it does on a file too short for its counts;
//! - `generate_groth16_proofs` asserts per circuit what `groth16_cuda.cu` asserts (a failed
//!   assertion panics here where the C++ aborts), reads a, b, c (`abc_size` of them), the
//!   input and aux values as BLS12-381 scalars in their memory form, and the densities as
//!   64-bit `Lsb0` words, computes H on the domain the H points give, and writes each proof
//!   as the C++ `groth16_proof { a, b, c }` of affine points.
//!
//! The arithmetic is blstrs' (Pippenger multi-exponentiation, a radix-2 FFT here), so a
//! proof is a function of the circuit's vectors, the parameters and r, s only: byte-equal
//! to bellperson's CPU prover's exactly when everything handed over is right.
//!
//! [`standin`] has what only tests need: the calls made, and a switch that makes the next
//! calls fail as supraseal does on a machine without a CUDA device.

use std::fmt;
use std::mem::size_of;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Curve, Group};

/// What only tests of the stand-in's users need.
pub mod standin {
    use super::*;

    pub(super) static DEVICE: AtomicBool = AtomicBool::new(true);
    pub(super) static CALLS: AtomicUsize = AtomicUsize::new(0);
    pub(super) static CIRCUITS: AtomicUsize = AtomicUsize::new(0);
    pub(super) static LARGEST: AtomicUsize = AtomicUsize::new(0);

    /// Whether `generate_groth16_proofs` finds a CUDA device (on by default); without one
    /// it fails as supraseal does.
    pub fn set_device_present(present: bool) {
        DEVICE.store(present, Ordering::SeqCst);
    }

    /// Calls of `generate_groth16_proofs` so far, and the circuits they proved.
    pub fn calls() -> (usize, usize) {
        (
            CALLS.load(Ordering::SeqCst),
            CIRCUITS.load(Ordering::SeqCst),
        )
    }

    /// The most circuits one call proved since the last time this was asked.
    pub fn take_largest_call() -> usize {
        LARGEST.swap(0, Ordering::SeqCst)
    }
}

mod cuda {
    use std::fmt;

    /// supraseal's error: a code and its message.
    pub struct Error {
        /// An errno or CUDA error code.
        pub code: i32,
        pub(crate) message: String,
    }

    impl fmt::Display for Error {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.message)
        }
    }

    impl From<Error> for String {
        fn from(error: Error) -> String {
            error.message
        }
    }
}

/// The verifying key's points the prover uses.
struct Key {
    alpha_g1: G1Affine,
    beta_g1: G1Affine,
    beta_g2: G2Affine,
    delta_g1: G1Affine,
    delta_g2: G2Affine,
}

struct Loaded {
    vk: Key,
    h: Vec<G1Affine>,
    l: Vec<G1Affine>,
    a: Vec<G1Affine>,
    b_g1: Vec<G1Affine>,
    b_g2: Vec<G2Affine>,
}

/// The parameters, loaded from a `.params` file.
#[derive(Clone, Default)]
pub struct SRS {
    loaded: Option<Arc<Loaded>>,
}

impl fmt::Debug for SRS {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SRS").finish_non_exhaustive()
    }
}

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;
const EINVAL: i32 = 22;

fn layout_mismatch() -> cuda::Error {
    cuda::Error {
        code: EINVAL,
        message: "SRS file size/layout mismatch".into(),
    }
}

/// The file's bytes from a cursor, as the C++ loader walks them.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], cuda::Error> {
        let end = self.at.checked_add(n).ok_or_else(layout_mismatch)?;
        let taken = self.bytes.get(self.at..end).ok_or_else(layout_mismatch)?;
        self.at = end;
        Ok(taken)
    }

    /// A count, which the loader reads only while more than four bytes are left.
    fn count(&mut self) -> Result<usize, cuda::Error> {
        if self.bytes.len() <= self.at + 4 {
            return Err(layout_mismatch());
        }
        let bytes: [u8; 4] = self.take(4)?.try_into().expect("four bytes");
        Ok(u32::from_be_bytes(bytes) as usize)
    }

    fn g1(&mut self) -> Result<G1Affine, cuda::Error> {
        let bytes: &[u8; G1_BYTES] = self.take(G1_BYTES)?.try_into().expect("a G1 point");
        Option::from(G1Affine::from_uncompressed_unchecked(bytes)).ok_or_else(layout_mismatch)
    }

    fn g2(&mut self) -> Result<G2Affine, cuda::Error> {
        let bytes: &[u8; G2_BYTES] = self.take(G2_BYTES)?.try_into().expect("a G2 point");
        Option::from(G2Affine::from_uncompressed_unchecked(bytes)).ok_or_else(layout_mismatch)
    }

    fn g1s(&mut self) -> Result<Vec<G1Affine>, cuda::Error> {
        let count = self.count()?;
        (0..count).map(|_| self.g1()).collect()
    }
}

impl SRS {
    /// Loads the `.params` file at `srs_path` (`cache` is accepted and ignored).
    pub fn try_new(srs_path: PathBuf, cache: bool) -> Result<Self, cuda::Error> {
        let _ = cache;
        let bytes = std::fs::read(&srs_path).map_err(|e| cuda::Error {
            code: e.raw_os_error().unwrap_or(EINVAL),
            message: format!("{}: {e}", srs_path.display()),
        })?;
        let mut reader = Reader {
            bytes: &bytes,
            at: 0,
        };
        let alpha_g1 = reader.g1()?;
        let beta_g1 = reader.g1()?;
        let beta_g2 = reader.g2()?;
        let _gamma_g2 = reader.g2()?;
        let delta_g1 = reader.g1()?;
        let delta_g2 = reader.g2()?;
        let ic = reader.count()?;
        reader.take(ic * G1_BYTES)?;
        let h = reader.g1s()?;
        let l = reader.g1s()?;
        let a = reader.g1s()?;
        let b_g1 = reader.g1s()?;
        let count = reader.count()?;
        let b_g2 = (0..count).map(|_| reader.g2()).collect::<Result<_, _>>()?;
        Ok(SRS {
            loaded: Some(Arc::new(Loaded {
                vk: Key {
                    alpha_g1,
                    beta_g1,
                    beta_g2,
                    delta_g1,
                    delta_g2,
                },
                h,
                l,
                a,
                b_g1,
                b_g2,
            })),
        })
    }

    /// Drops the parameters from supraseal's cache (the stand-in keeps none).
    pub fn evict(&self) {}
}

/// One circuit's parts, as supraseal's C++ side reads them.
#[repr(C)]
pub struct Assignment<Scalar> {
    /// Density of the A query over the aux values: `Lsb0` 64-bit words.
    pub a_aux_density: *const usize,
    /// Bits of it.
    pub a_aux_bit_len: usize,
    /// Bits set.
    pub a_aux_popcount: usize,
    /// Density of the B query over the inputs.
    pub b_inp_density: *const usize,
    /// Bits of it.
    pub b_inp_bit_len: usize,
    /// Bits set.
    pub b_inp_popcount: usize,
    /// Density of the B query over the aux values.
    pub b_aux_density: *const usize,
    /// Bits of it.
    pub b_aux_bit_len: usize,
    /// Bits set.
    pub b_aux_popcount: usize,
    /// A·w per constraint.
    pub a: *const Scalar,
    /// B·w per constraint.
    pub b: *const Scalar,
    /// C·w per constraint.
    pub c: *const Scalar,
    /// Constraints.
    pub abc_size: usize,
    /// Input values.
    pub inp_assignment_data: *const Scalar,
    /// Inputs.
    pub inp_assignment_size: usize,
    /// Aux values.
    pub aux_assignment_data: *const Scalar,
    /// Aux variables.
    pub aux_assignment_size: usize,
}

/// The proof as the C++ side writes it.
#[repr(C)]
struct RawProof {
    a: G1Affine,
    b: G2Affine,
    c: G1Affine,
}

/// A circuit's parts, read from the raw pointers.
struct Circuit<'a> {
    abc: [&'a [Scalar]; 3],
    inputs: &'a [Scalar],
    aux: &'a [Scalar],
    a_aux: &'a [u64],
    b_inp: &'a [u64],
    b_aux: &'a [u64],
}

fn bit(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}

/// The parts `p` points at.
///
/// # Safety
/// Every pointer must be valid for the length beside it (the density pointers for their
/// bit lengths rounded up to whole words), as supraseal requires of its callers.
unsafe fn read<S>(p: &Assignment<S>) -> Circuit<'_> {
    let scalars = |data: *const S, len: usize| -> &[Scalar] {
        if len == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(data as *const Scalar, len)
        }
    };
    let words = |data: *const usize, bits: usize| -> &[u64] {
        if bits == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(data as *const u64, bits.div_ceil(64))
        }
    };
    Circuit {
        abc: [
            scalars(p.a, p.abc_size),
            scalars(p.b, p.abc_size),
            scalars(p.c, p.abc_size),
        ],
        inputs: scalars(p.inp_assignment_data, p.inp_assignment_size),
        aux: scalars(p.aux_assignment_data, p.aux_assignment_size),
        a_aux: words(p.a_aux_density, p.a_aux_bit_len),
        b_inp: words(p.b_inp_density, p.b_inp_bit_len),
        b_aux: words(p.b_aux_density, p.b_aux_bit_len),
    }
}

/// Proves every circuit of `provers` with `r_s[i]`, `s_s[i]` into `proofs[i]`; panics with
/// supraseal's message where supraseal returns an error.
pub fn generate_groth16_proofs<S, PR>(
    provers: &[Assignment<S>],
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
) {
    let num_circuits = provers.len();
    assert_eq!(r_s.len(), num_circuits);
    assert_eq!(s_s.len(), num_circuits);
    assert_eq!(proofs.len(), num_circuits);
    standin::CALLS.fetch_add(1, Ordering::SeqCst);
    standin::CIRCUITS.fetch_add(num_circuits, Ordering::SeqCst);
    standin::LARGEST.fetch_max(num_circuits, Ordering::SeqCst);
    if !standin::DEVICE.load(Ordering::SeqCst) {
        panic!("No CUDA devices available");
    }
    // What the C++ side reads and writes: 32-byte scalars, 384-byte proofs.
    assert_eq!(
        size_of::<S>(),
        size_of::<Scalar>(),
        "scalars of another size"
    );
    assert_eq!(
        size_of::<PR>(),
        size_of::<RawProof>(),
        "proofs of another size"
    );
    let srs = srs.loaded.as_deref().expect("an SRS that was loaded");

    for p in provers {
        assert!(
            srs.l.len() == p.aux_assignment_size,
            "points_l.size() == p.aux_assignment_size"
        );
        assert!(
            srs.a.len() == p.inp_assignment_size + p.a_aux_popcount,
            "points_a.size() == p.inp_assignment_size + p.a_aux_popcount"
        );
        assert!(
            srs.b_g1.len() == p.b_inp_popcount + p.b_aux_popcount,
            "points_b_g1.size() == p.b_inp_popcount + p.b_aux_popcount"
        );
        assert!(
            p.a_aux_bit_len == p.aux_assignment_size,
            "p.a_aux_bit_len == p.aux_assignment_size"
        );
        assert!(
            p.b_aux_bit_len == p.aux_assignment_size,
            "p.b_aux_bit_len == p.aux_assignment_size"
        );
        assert!(
            p.b_inp_bit_len == p.inp_assignment_size,
            "p.b_inp_bit_len == p.inp_assignment_size"
        );
    }

    for (index, p) in provers.iter().enumerate() {
        // SAFETY: the caller's pointers are valid for their lengths, as supraseal requires.
        let circuit = unsafe { read(p) };
        // SAFETY: `S` has `Scalar`'s size (asserted above) and is its memory form.
        let (r, s) = unsafe {
            (
                *(&r_s[index] as *const S as *const Scalar),
                *(&s_s[index] as *const S as *const Scalar),
            )
        };
        let proof = prove(srs, p, &circuit, r, s);
        // SAFETY: `PR` has `RawProof`'s size (asserted above); the C++ side writes its
        // `groth16_proof` the same way, whatever the caller's type.
        unsafe {
            (proofs.as_mut_ptr() as *mut RawProof)
                .add(index)
                .write(proof)
        };
    }
}

fn prove(
    srs: &Loaded,
    p: &Assignment<impl Sized>,
    circuit: &Circuit<'_>,
    r: Scalar,
    s: Scalar,
) -> RawProof {
    let h = msm_g1(&srs.h, &quotient(circuit.abc, srs.h.len()));
    let l = msm_g1(&srs.l, circuit.aux);

    // A: every input, then the aux values its density marks (the C++ cursors' walk).
    let mut a_scalars = circuit.inputs.to_vec();
    let mut b_scalars: Vec<Scalar> = (0..circuit.inputs.len())
        .filter(|&i| bit(circuit.b_inp, i))
        .map(|i| circuit.inputs[i])
        .collect();
    assert!(
        b_scalars.len() == p.b_inp_popcount,
        "b_cursor == prover.b_inp_popcount"
    );
    for (j, value) in circuit.aux.iter().enumerate() {
        if bit(circuit.a_aux, j) {
            a_scalars.push(*value);
        }
        if bit(circuit.b_aux, j) {
            b_scalars.push(*value);
        }
    }
    assert!(
        a_scalars.len() == srs.a.len(),
        "points_a_cursor == points_a.size()"
    );
    assert!(
        b_scalars.len() == srs.b_g1.len(),
        "points_b_cursor == points_b_g1.size()"
    );
    let a_answer = msm_g1(&srs.a, &a_scalars);
    let b1_answer = msm_g1(&srs.b_g1, &b_scalars);
    let b2_answer = msm_g2(&srs.b_g2, &b_scalars);

    let vk = &srs.vk;
    let g_a = vk.delta_g1 * r + vk.alpha_g1 + a_answer;
    let g_b = vk.delta_g2 * s + vk.beta_g2 + b2_answer;
    let g_c = a_answer * s
        + b1_answer * r
        + vk.delta_g1 * (r * s)
        + vk.alpha_g1 * s
        + vk.beta_g1 * r
        + h
        + l;
    RawProof {
        a: g_a.to_affine(),
        b: g_b.to_affine(),
        c: g_c.to_affine(),
    }
}

/// The coefficients of H = (A·B - C) / Z over the domain the H points give (the smallest
/// power of two above their count), as `groth16_ntt_h.cu` computes them.
fn quotient([a, b, c]: [&[Scalar]; 3], h_points: usize) -> Vec<Scalar> {
    let lg = usize::BITS - (h_points - 1).leading_zeros();
    let domain = 1usize << lg;
    assert!(a.len() <= domain, "actual_size <= domain_size");
    let coset = |values: &[Scalar]| {
        let mut v = values.to_vec();
        v.resize(domain, Scalar::ZERO);
        fft(&mut v, lg, true);
        distribute(&mut v, Scalar::MULTIPLICATIVE_GENERATOR);
        fft(&mut v, lg, false);
        v
    };
    let (mut a, b, c) = (coset(a), coset(b), coset(c));
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([domain as u64]) - Scalar::ONE;
    let z_inv = z.invert().expect("the coset avoids the domain");
    for i in 0..domain {
        a[i] = (a[i] * b[i] - c[i]) * z_inv;
    }
    fft(&mut a, lg, true);
    distribute(&mut a, Scalar::MULTIPLICATIVE_GENERATOR.invert().unwrap());
    a.truncate(h_points);
    a
}

/// Multiplies the i-th value by `g^i`.
fn distribute(values: &mut [Scalar], g: Scalar) {
    let mut power = Scalar::ONE;
    for value in values {
        *value *= power;
        power *= g;
    }
}

/// The radix-2 FFT of `values` (length `2^lg`) in place; `inverse` divides by the length.
fn fft(values: &mut [Scalar], lg: u32, inverse: bool) {
    let n = values.len();
    if lg == 0 {
        return;
    }
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - lg);
        if i < j {
            values.swap(i, j);
        }
    }
    let mut omega = Scalar::ROOT_OF_UNITY;
    for _ in lg..Scalar::S {
        omega = omega.square();
    }
    if inverse {
        omega = omega.invert().unwrap();
    }
    let mut half = 1;
    while half < n {
        let step = omega.pow_vartime([(n / (2 * half)) as u64]);
        for start in (0..n).step_by(2 * half) {
            let mut w = Scalar::ONE;
            for k in 0..half {
                let t = values[start + k + half] * w;
                values[start + k + half] = values[start + k] - t;
                values[start + k] += t;
                w *= step;
            }
        }
        half *= 2;
    }
    if inverse {
        let n_inv = Scalar::from(n as u64).invert().unwrap();
        for value in values {
            *value *= n_inv;
        }
    }
}

fn msm_g1(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    assert_eq!(points.len(), scalars.len());
    if points.is_empty() {
        return G1Projective::identity();
    }
    let points: Vec<G1Projective> = points.iter().map(|p| p.to_curve()).collect();
    G1Projective::multi_exp(&points, scalars)
}

fn msm_g2(points: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    assert_eq!(points.len(), scalars.len());
    if points.is_empty() {
        return G2Projective::identity();
    }
    let points: Vec<G2Projective> = points.iter().map(|p| p.to_curve()).collect();
    G2Projective::multi_exp(&points, scalars)
}

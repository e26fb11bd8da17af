//! A stand-in for the part of cuzk's bellperson fork that synthpool's seam uses: the
//! prover's vectors and densities as public fields, `from_pce` over vectors the caller made,
//! and `new_with_pinned` over three buffers the caller owns, handed back through a callback
//! when the prover releases them (never freed by the allocator).

pub use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};

pub mod groth16 {
    use ec_gpu_gen::multiexp_cpu::DensityTracker;
    use ff::PrimeField;

    /// Hands the three buffers back: a, b and c's pointers and the size given at creation.
    pub type PinnedReturnFn = Box<dyn FnOnce(*mut u8, *mut u8, *mut u8, usize) + Send>;

    struct Pinned {
        pointers: [*mut u8; 3],
        bytes: usize,
        give_back: Option<PinnedReturnFn>,
    }

    // SAFETY: the pointers are buffers this prover owns alone until it gives them back; the
    // fork sends its provers between threads the same way.
    unsafe impl Send for Pinned {}

    /// A prover's vectors, as the fork's.
    pub struct ProvingAssignment<Scalar: PrimeField> {
        pub a_aux_density: DensityTracker,
        pub b_input_density: DensityTracker,
        pub b_aux_density: DensityTracker,
        pub a: Vec<Scalar>,
        pub b: Vec<Scalar>,
        pub c: Vec<Scalar>,
        pub input_assignment: Vec<Scalar>,
        pub aux_assignment: Vec<Scalar>,
        pinned: Option<Pinned>,
    }

    impl<Scalar: PrimeField> ProvingAssignment<Scalar> {
        /// A prover over vectors evaluated elsewhere (the assignments travel apart).
        pub fn from_pce(
            a: Vec<Scalar>,
            b: Vec<Scalar>,
            c: Vec<Scalar>,
            a_aux_density: DensityTracker,
            b_input_density: DensityTracker,
            b_aux_density: DensityTracker,
        ) -> Self {
            Self {
                a_aux_density,
                b_input_density,
                b_aux_density,
                a,
                b,
                c,
                input_assignment: Vec::new(),
                aux_assignment: Vec::new(),
                pinned: None,
            }
        }

        /// A prover whose a, b and c are empty over the caller's buffers, with room for
        /// `num_constraints` values each.
        ///
        /// # Safety
        /// Each pointer must be valid, aligned and unaliased for `num_constraints` values
        /// until `return_fn` is called.
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn new_with_pinned(
            num_constraints: usize,
            num_aux: usize,
            num_inputs: usize,
            a_ptr: *mut Scalar,
            b_ptr: *mut Scalar,
            c_ptr: *mut Scalar,
            buf_bytes: usize,
            return_fn: PinnedReturnFn,
        ) -> Self {
            // SAFETY (the vectors below): the caller's contract above; they are never grown
            // past their capacity (the seam writes exactly `num_constraints` values) and never
            // freed by the allocator (`release_abc` forgets them).
            let over = |pointer: *mut Scalar| Vec::from_raw_parts(pointer, 0, num_constraints);
            Self {
                a_aux_density: DensityTracker::new(),
                b_input_density: DensityTracker::new(),
                b_aux_density: DensityTracker::new(),
                a: over(a_ptr),
                b: over(b_ptr),
                c: over(c_ptr),
                input_assignment: Vec::with_capacity(num_inputs),
                aux_assignment: Vec::with_capacity(num_aux),
                pinned: Some(Pinned {
                    pointers: [a_ptr.cast(), b_ptr.cast(), c_ptr.cast()],
                    bytes: buf_bytes,
                    give_back: Some(return_fn),
                }),
            }
        }

        /// Whether a, b and c live in the caller's buffers.
        pub fn is_pinned(&self) -> bool {
            self.pinned.is_some()
        }

        /// Gives pinned buffers back (a, b and c left empty); vectors of the heap are freed.
        pub fn release_abc(&mut self) {
            let vectors = [&mut self.a, &mut self.b, &mut self.c].map(std::mem::take);
            let Some(mut pinned) = self.pinned.take() else {
                return;
            };
            for (vector, pointer) in vectors.into_iter().zip(pinned.pointers) {
                assert_eq!(
                    vector.as_ptr().cast::<u8>(),
                    pointer,
                    "a pinned vector moved"
                );
                std::mem::forget(vector);
            }
            if let Some(give_back) = pinned.give_back.take() {
                let [a, b, c] = pinned.pointers;
                give_back(a, b, c, pinned.bytes);
            }
        }
    }

    impl<Scalar: PrimeField> Drop for ProvingAssignment<Scalar> {
        fn drop(&mut self) {
            self.release_abc();
        }
    }
}

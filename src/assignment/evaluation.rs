//! How the assignment evaluates a constraint as it is enforced: each side summed by the
//! kernel chosen once per constraint (prefetching, bit values, values read in two places),
//! its densities marked, and a side whose value the circuit gave only checked.

use super::*;

impl<Scalar: PrimeField> ProvingAssignment<Scalar> {
    /// Evaluates one side of a constraint with the kernel `PREFETCH` and `BIT_VALUES` name,
    /// marking B's input density when `track_inputs` and the given aux density. A side whose
    /// value is `known` is only marked and checked.
    #[inline(always)]
    pub(super) fn evaluate_side<
        const PREFETCH: bool,
        const BIT_VALUES: bool,
        const TWO_PLACES: bool,
    >(
        &mut self,
        side: Side,
        lc: &LinearCombination<Scalar>,
        track_inputs: bool,
        aux_density: Option<AuxDensity>,
        known: Option<Scalar>,
    ) -> Scalar {
        if let Some(value) = known {
            return self.mark_side::<TWO_PLACES>(side, lc, aux_density, value);
        }
        let constants = &self.constants;
        // One accumulator across both halves, as bellperson: no extra field addition, and an
        // empty half (most sides have terms of one kind only) is passed over.
        let mut acc = Scalar::ZERO;
        let input_terms = lc.input_terms();
        if !input_terms.is_empty() {
            let vectors = &mut self.vectors;
            let density = track_inputs.then_some(&mut vectors.b_input_density);
            match evaluate::<Scalar, [Scalar], PREFETCH, BIT_VALUES>(
                constants,
                input_terms,
                &vectors.input_assignment,
                density,
                acc,
            ) {
                Ok(sum) => acc = sum,
                Err(fault) => {
                    self.note_fault(side, VariableKind::Input, fault);
                    return Scalar::ZERO;
                }
            }
        }
        let aux_terms = lc.aux_terms();
        if !aux_terms.is_empty() {
            let vectors = &mut self.vectors;
            let density: Option<&mut DensityTracker> = match aux_density {
                Some(AuxDensity::A) => Some(&mut vectors.a_aux_density),
                Some(AuxDensity::B) => Some(&mut vectors.b_aux_density),
                None => None,
            };
            let sum = if TWO_PLACES {
                let values = TwoPlaces {
                    before: held_elsewhere(&self.before),
                    own: &vectors.aux_assignment,
                };
                evaluate::<Scalar, _, PREFETCH, BIT_VALUES>(
                    constants, aux_terms, &values, density, acc,
                )
            } else {
                evaluate::<Scalar, [Scalar], PREFETCH, BIT_VALUES>(
                    constants,
                    aux_terms,
                    &vectors.aux_assignment,
                    density,
                    acc,
                )
            };
            match sum {
                Ok(sum) => acc = sum,
                Err(fault) => {
                    self.note_fault(side, VariableKind::Aux, fault);
                    return Scalar::ZERO;
                }
            }
        }
        acc
    }

    /// The density and range checks of an A side whose value the circuit gave: `value`, or
    /// zero after a fault, as an evaluation's fault gives.
    pub(super) fn mark_side<const TWO_PLACES: bool>(
        &mut self,
        side: Side,
        lc: &LinearCombination<Scalar>,
        aux_density: Option<AuxDensity>,
        value: Scalar,
    ) -> Scalar {
        let (constants, vectors) = (&self.constants, &mut self.vectors);
        if let Err(fault) = mark(
            constants,
            lc.input_terms(),
            &vectors.input_assignment[..],
            None,
        ) {
            self.note_fault(side, VariableKind::Input, fault);
            return Scalar::ZERO;
        }
        let density = match aux_density {
            Some(AuxDensity::A) => Some(&mut vectors.a_aux_density),
            Some(AuxDensity::B) => Some(&mut vectors.b_aux_density),
            None => None,
        };
        let marked = if TWO_PLACES {
            let values = TwoPlaces {
                before: held_elsewhere(&self.before),
                own: &vectors.aux_assignment,
            };
            mark(constants, lc.aux_terms(), &values, density)
        } else {
            mark(
                constants,
                lc.aux_terms(),
                &vectors.aux_assignment[..],
                density,
            )
        };
        if let Err(fault) = marked {
            self.note_fault(side, VariableKind::Aux, fault);
            return Scalar::ZERO;
        }
        // Tests run with debug assertions: there every given value is checked against the
        // sum it stands for.
        debug_assert!(
            self.evaluate_side::<false, false, TWO_PLACES>(side, lc, false, None, None) == value,
            "a value given for side {side:?} differs from its combination's"
        );
        value
    }

    /// Evaluates one constraint built elsewhere (by `enforce`, or by a recorder this
    /// assignment accompanies) and appends its A·w, B·w and C·w; A·w is `known_a` where the
    /// circuit gave it.
    pub(crate) fn evaluate_constraint(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    ) {
        // The kernel is chosen once per constraint, each choice with its own copy of the
        // constraint's evaluation and the loops inline in it: chosen per combination half,
        // the calls around the loops cost nearly a third of evaluation's instructions
        // (callgrind, real 2 KiB PoRep: 789 against 560 per constraint). So is where the aux
        // values lie: a branch reading its system's in place has a loop of its own, and a
        // system holding all of its values runs the one-slice loop.
        let two_places = self.before.is_some();
        match (self.kernel, two_places) {
            (EvalKernel::Portable, false) => {
                self.evaluate_constraint_in::<false, false, false>(a, known_a, b, c)
            }
            (EvalKernel::Prefetch, false) => {
                self.evaluate_constraint_in::<true, false, false>(a, known_a, b, c)
            }
            (EvalKernel::BitValues, false) => {
                self.evaluate_constraint_in::<false, true, false>(a, known_a, b, c)
            }
            (EvalKernel::BitValuesPrefetch, false) => {
                self.evaluate_constraint_in::<true, true, false>(a, known_a, b, c)
            }
            (EvalKernel::Portable, true) => {
                self.evaluate_constraint_in::<false, false, true>(a, known_a, b, c)
            }
            (EvalKernel::Prefetch, true) => {
                self.evaluate_constraint_in::<true, false, true>(a, known_a, b, c)
            }
            (EvalKernel::BitValues, true) => {
                self.evaluate_constraint_in::<false, true, true>(a, known_a, b, c)
            }
            (EvalKernel::BitValuesPrefetch, true) => {
                self.evaluate_constraint_in::<true, true, true>(a, known_a, b, c)
            }
        }
    }

    /// [`Self::evaluate_constraint`] with the kernel `PREFETCH` and `BIT_VALUES` name, the
    /// aux values in two places where `TWO_PLACES`.
    #[inline(never)]
    pub(super) fn evaluate_constraint_in<
        const PREFETCH: bool,
        const BIT_VALUES: bool,
        const TWO_PLACES: bool,
    >(
        &mut self,
        a: &LinearCombination<Scalar>,
        known_a: Option<Scalar>,
        b: &LinearCombination<Scalar>,
        c: &LinearCombination<Scalar>,
    ) {
        // As bellperson: inputs count as dense in A (the prover adds `input * 0 = 0` for
        // each), B tracks both densities, C none (its query is dense).
        let a_density = Some(AuxDensity::A);
        let a_value = self.evaluate_side::<PREFETCH, BIT_VALUES, TWO_PLACES>(
            Side::A,
            a,
            false,
            a_density,
            known_a,
        );
        let b_density = Some(AuxDensity::B);
        let b_value = self.evaluate_side::<PREFETCH, BIT_VALUES, TWO_PLACES>(
            Side::B,
            b,
            true,
            b_density,
            None,
        );
        let c_value =
            self.evaluate_side::<PREFETCH, BIT_VALUES, TWO_PLACES>(Side::C, c, false, None, None);
        let full = |v: &Vec<Scalar>| v.len() == v.capacity();
        let vectors = &self.vectors;
        if full(&vectors.a) || full(&vectors.b) || full(&vectors.c) {
            // After a fault the vectors are refused: rows that do not fit are not grown for.
            if self.fault.is_some() {
                return;
            }
            if let Err(error) = self.grow_rows() {
                // The row is lost; synthesis ends with the error.
                self.ran_out(error);
                return;
            }
        }
        self.vectors.a.push(a_value);
        self.vectors.b.push(b_value);
        self.vectors.c.push(c_value);
    }
}

//! The 256 × 256-bit product on x86_64 with BMI2's `mulx` and ADX's two carry chains
//! (`adcx`, `adox`), which LLVM does not emit from portable Rust: 54 instructions for the
//! full 512-bit product. Whether the CPU has BMI2 and ADX is asked at run time (std caches
//! the answer), since provers run binaries built elsewhere.

use std::arch::asm;

/// Proof that this CPU has BMI2 and ADX: the only way to reach [`Mulx::product`].
#[derive(Clone, Copy)]
pub(crate) struct Mulx(());

impl Mulx {
    /// `Some` when the CPU has both extensions.
    pub(crate) fn detect() -> Option<Mulx> {
        (std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("adx"))
            .then_some(Mulx(()))
    }

    /// `a · b`, little-endian 64-bit limbs.
    #[inline(always)]
    pub(crate) fn product(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 8] {
        let (r0, r1, r2, r3, r4, r5, r6, r7);
        // SAFETY: `self` exists only when the CPU has BMI2 (`mulx`) and ADX (`adcx`,
        // `adox`). The block reads the four limbs behind each of `a` and `b`, both valid
        // references, writes only its declared registers and neither touches the stack nor
        // memory otherwise. Row 0 writes a0·b into r0..r4 with one carry chain; each later
        // row i adds ai·b into r(i)..r(i+4), low halves on the OF chain and high halves on
        // the CF chain, and lands both chains' last carries in r(i+4), which cannot
        // overflow since the partial product fits in i + 5 limbs. A register not yet
        // holding a limb (r7 for rows 1 and 2, `a`'s pointer once its last limb is loaded)
        // serves as the zero that lands the carries.
        unsafe {
            asm!(
                "mov rdx, [{a}]",
                "mulx {r1}, {r0}, [{b}]",
                "mulx {r2}, {lo}, [{b} + 8]",
                "add {r1}, {lo}",
                "mulx {r3}, {lo}, [{b} + 16]",
                "adc {r2}, {lo}",
                "mulx {r4}, {lo}, [{b} + 24]",
                "adc {r3}, {lo}",
                "adc {r4}, 0",
                // row 1
                "mov rdx, [{a} + 8]",
                "xor {r7:e}, {r7:e}",
                "mulx {hi}, {lo}, [{b}]",
                "adox {r1}, {lo}",
                "adcx {r2}, {hi}",
                "mulx {hi}, {lo}, [{b} + 8]",
                "adox {r2}, {lo}",
                "adcx {r3}, {hi}",
                "mulx {hi}, {lo}, [{b} + 16]",
                "adox {r3}, {lo}",
                "adcx {r4}, {hi}",
                "mulx {r5}, {lo}, [{b} + 24]",
                "adox {r4}, {lo}",
                "adcx {r5}, {r7}",
                "adox {r5}, {r7}",
                // row 2
                "mov rdx, [{a} + 16]",
                "xor {r7:e}, {r7:e}",
                "mulx {hi}, {lo}, [{b}]",
                "adox {r2}, {lo}",
                "adcx {r3}, {hi}",
                "mulx {hi}, {lo}, [{b} + 8]",
                "adox {r3}, {lo}",
                "adcx {r4}, {hi}",
                "mulx {hi}, {lo}, [{b} + 16]",
                "adox {r4}, {lo}",
                "adcx {r5}, {hi}",
                "mulx {r6}, {lo}, [{b} + 24]",
                "adox {r5}, {lo}",
                "adcx {r6}, {r7}",
                "adox {r6}, {r7}",
                // row 3
                "mov rdx, [{a} + 24]",
                "xor {a:e}, {a:e}",
                "mulx {hi}, {lo}, [{b}]",
                "adox {r3}, {lo}",
                "adcx {r4}, {hi}",
                "mulx {hi}, {lo}, [{b} + 8]",
                "adox {r4}, {lo}",
                "adcx {r5}, {hi}",
                "mulx {hi}, {lo}, [{b} + 16]",
                "adox {r5}, {lo}",
                "adcx {r6}, {hi}",
                "mulx {r7}, {lo}, [{b} + 24]",
                "adox {r6}, {lo}",
                "adcx {r7}, {a}",
                "adox {r7}, {a}",
                a = inout(reg) a.as_ptr() => _,
                b = in(reg) b.as_ptr(),
                r0 = out(reg) r0,
                r1 = out(reg) r1,
                r2 = out(reg) r2,
                r3 = out(reg) r3,
                r4 = out(reg) r4,
                r5 = out(reg) r5,
                r6 = out(reg) r6,
                r7 = out(reg) r7,
                hi = out(reg) _,
                lo = out(reg) _,
                out("rdx") _,
                options(pure, readonly, nostack),
            );
        }
        [r0, r1, r2, r3, r4, r5, r6, r7]
    }
}

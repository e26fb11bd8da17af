//! Where the parts of a spread circuit put their aux values ([`crate::branches::spread`]):
//! for every part a recording system spread (in a branch of its own, or run after another in
//! the system or a branch), the point the branches were taken at and the range the part's own
//! aux variables took, as a branch per part would have put them. A witness generator given
//! these hands each part's branch the range it will fill, so the parts write at once, in
//! place (`spread.rs`).

use std::io;

use crate::error::Error;
use crate::precompiled::storage::sections::{SectionReader, SectionWriter, Source};

/// One part spread from the recorded system: spread when the system had `point` aux
/// variables, its own `len` of them numbered from `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    pub(crate) point: usize,
    pub(crate) at: usize,
    pub(crate) len: usize,
}

/// The recorded parts, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Parts(pub(crate) Vec<Part>);

impl Parts {
    /// Checks what a recorder always produces, for a circuit of `aux` aux variables: each
    /// part taken at or before where it lands, the parts in order and apart, within `aux`.
    pub(crate) fn validate(&self, aux: usize) -> Result<(), String> {
        self.check(0, aux)
    }

    /// The parts, where they lie as [`Self::validate`] checks after parts ending at `after`
    /// (the ones noted before them), within `aux`.
    pub(crate) fn validate_after(self, after: usize, aux: usize) -> Result<Vec<Part>, String> {
        self.check(after, aux)?;
        Ok(self.0)
    }

    fn check(&self, mut after: usize, aux: usize) -> Result<(), String> {
        for (index, part) in self.0.iter().enumerate() {
            let end = part.at.checked_add(part.len);
            if part.point > part.at || part.at < after || end.is_none_or(|end| end > aux) {
                return Err(format!(
                    "part {index} (taken at {}, {} aux variables from {}) does not lie after \
                     the previous one within {aux}",
                    part.point, part.len, part.at
                ));
            }
            after = part.at + part.len;
        }
        Ok(())
    }

    /// Writes the parts as one section of `point, at, len` triples.
    pub(crate) fn write_sections(&self, out: &mut SectionWriter<'_>) -> io::Result<()> {
        let words: Vec<u64> = self
            .0
            .iter()
            .flat_map(|part| [part.point, part.at, part.len].map(|n| n as u64))
            .collect();
        out.words(&words)
    }

    /// Reads what [`Self::write_sections`] wrote, for a circuit of `aux` aux variables.
    pub(crate) fn read_sections<S: Source>(
        input: &mut SectionReader<S>,
        aux: usize,
    ) -> Result<Self, Error> {
        let words = input.words::<u64>()?;
        if words.len() % 3 != 0 {
            return Err(input.corrupt("the parts are not whole triples".into()));
        }
        let to_count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let parts = Parts(
            words
                .chunks_exact(3)
                .map(|triple| Part {
                    point: to_count(triple[0]),
                    at: to_count(triple[1]),
                    len: to_count(triple[2]),
                })
                .collect(),
        );
        parts
            .validate(aux)
            .map_err(|message| input.corrupt(message))?;
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_lie_in_order_within_the_aux_variables() {
        let part = |point, at, len| Part { point, at, len };
        assert!(Parts(vec![part(2, 5, 3), part(2, 8, 2)])
            .validate(10)
            .is_ok());
        assert!(Parts(vec![]).validate(0).is_ok());
        for broken in [
            vec![part(6, 5, 3)],
            vec![part(2, 5, 3), part(2, 7, 1)],
            vec![part(2, 8, 3)],
            vec![part(0, usize::MAX, 2)],
        ] {
            assert!(Parts(broken.clone()).validate(10).is_err(), "{broken:?}");
        }
    }
}

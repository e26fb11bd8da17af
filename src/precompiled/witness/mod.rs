//! The witness of a recorded circuit: its values alone (no constraint is built), generated
//! on one thread or, for the parts a circuit spreads, on each part's thread where the
//! recording placed them; each value classified for evaluation as it is written.

pub(crate) mod generator;
pub(crate) mod kinds;
pub(crate) mod parts;
pub(crate) mod spread;
#[allow(unsafe_code)]
pub(crate) mod windows;

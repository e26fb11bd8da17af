//! What filecoin-ffi's `filcrypto` calls to prove: filecoin-proofs-api's C2, WindowPoSt,
//! WinningPoSt and update proofs, through the patched crates once scripts/patch-ffi.sh ran.

pub use filecoin_proofs_api::post::{
    generate_single_window_post_with_vanilla, generate_winning_post_with_vanilla,
};
pub use filecoin_proofs_api::seal::seal_commit_phase2;
pub use filecoin_proofs_api::update::generate_empty_sector_update_proof_with_vanilla;

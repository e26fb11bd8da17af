//! Every field's store, one per field type for the whole process, and what the drop-ins'
//! public functions do to them.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ff::PrimeField;

use super::{lock, CacheStats, Disk, Slot, Store};
use crate::groth16::files;

/// What is done to every field's store at once.
trait AnyStore: Any + Send + Sync {
    fn release_kept(&self);
    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<Scalar: PrimeField> AnyStore for Store<Scalar> {
    fn release_kept(&self) {
        let released = lock(&self.state).kept.take();
        // Freed outside the lock: returning gigabytes to the system takes a while.
        drop(released);
    }

    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// Every field's store, filed under the field's type.
fn stores() -> &'static Mutex<HashMap<TypeId, Arc<dyn AnyStore>>> {
    static STORES: OnceLock<Mutex<HashMap<TypeId, Arc<dyn AnyStore>>>> = OnceLock::new();
    STORES.get_or_init(Default::default)
}

/// Drops the storage kept for the next batch, of every field.
pub(crate) fn release_kept() {
    let stores: Vec<Arc<dyn AnyStore>> = lock(stores()).values().cloned().collect();
    for store in stores {
        store.release_kept();
    }
}

/// The store of `Scalar`'s recordings, one per field type for the whole process.
pub(crate) fn store<Scalar: PrimeField>() -> Arc<Store<Scalar>> {
    let mut stores = lock(stores());
    let store = stores.entry(TypeId::of::<Scalar>()).or_insert_with(|| {
        Arc::new(Store::<Scalar>::new(Disk {
            dir: files::trusted_cache_dir,
            list: files::listing,
            load: files::load,
        }))
    });
    Arc::clone(store)
        .as_any()
        .downcast::<Store<Scalar>>()
        .expect("stores are filed under their own type")
}

/// What the drop-ins of `Scalar` have done in this process.
pub fn stats<Scalar: PrimeField>() -> CacheStats {
    lock(&store::<Scalar>().state).stats
}

/// Drops every trusted recording of `Scalar` held in memory (their memory is freed once no
/// batch uses them), the storage kept for the next batch, and which files were refused;
/// the persistent cache's files stay, and so do recordings a running batch holds on
/// probation.
pub fn clear<Scalar: PrimeField>() {
    let store = store::<Scalar>();
    let released = {
        let mut state = lock(&store.state);
        state
            .entries
            .retain(|_, (_, slot)| matches!(slot, Slot::Probation));
        state.refused.clear();
        state.kept.take()
    };
    drop(released);
}

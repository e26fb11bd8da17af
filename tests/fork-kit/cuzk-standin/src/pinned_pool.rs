//! A stand-in for cuzk's pinned pool (`cuzk-core/src/pinned_pool.rs`): the same names and
//! contracts over heap buffers instead of `cudaHostAlloc`'s. A buffer frees itself when
//! dropped, as cuzk's does, so whoever hands its memory to a prover must forget it; every
//! buffer checked in is checked against what was allocated at that address.

use std::alloc::{alloc, dealloc, Layout};
use std::collections::HashMap;
use std::sync::Mutex;

/// Page alignment, as cudaHostAlloc's.
const ALIGN: usize = 4096;

/// One buffer of `size` bytes.
pub struct PinnedBuffer {
    ptr: *mut u8,
    size: usize,
}

// SAFETY: a buffer is owned by one holder at a time, as cuzk's.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// A buffer again from what `as_ptr` and `size` gave.
    pub fn from_raw(ptr: *mut u8, size: usize) -> Self {
        Self { ptr, size }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `PinnedPool::allocate` with this size and alignment (the pool
        // checks every buffer checked in against its allocation).
        unsafe { dealloc(self.ptr, Layout::from_size_align(self.size, ALIGN).unwrap()) }
    }
}

/// Buffers to lend: at most `limit` allocated, reused best fit as cuzk's pool does.
pub struct PinnedPool {
    free: Mutex<Vec<PinnedBuffer>>,
    allocated: Mutex<HashMap<usize, usize>>,
    limit: usize,
}

impl PinnedPool {
    /// A pool that allocates at most `limit` buffers (0: never has room).
    pub fn with_limit(limit: usize) -> Self {
        Self {
            free: Mutex::new(Vec::new()),
            allocated: Mutex::new(HashMap::new()),
            limit,
        }
    }

    /// A free buffer of at least `min_bytes` (the smallest), else a new one while under the
    /// limit.
    pub fn checkout(&self, min_bytes: usize) -> Option<PinnedBuffer> {
        let mut free = self.free.lock().unwrap();
        let best = (0..free.len())
            .filter(|&i| free[i].size >= min_bytes)
            .min_by_key(|&i| free[i].size);
        if let Some(i) = best {
            return Some(free.swap_remove(i));
        }
        drop(free);
        self.allocate(min_bytes)
    }

    fn allocate(&self, size: usize) -> Option<PinnedBuffer> {
        let mut allocated = self.allocated.lock().unwrap();
        if allocated.len() >= self.limit {
            return None;
        }
        // SAFETY: a non-zero size (a circuit has at least one constraint) and a valid
        // alignment.
        let ptr = unsafe { alloc(Layout::from_size_align(size.max(1), ALIGN).unwrap()) };
        assert!(!ptr.is_null(), "out of memory");
        allocated.insert(ptr as usize, size.max(1));
        Some(PinnedBuffer {
            ptr,
            size: size.max(1),
        })
    }

    /// Takes a buffer back; one whose size is not its allocation's is a bug in the caller.
    pub fn checkin(&self, buffer: PinnedBuffer) {
        let allocated = self
            .allocated
            .lock()
            .unwrap()
            .get(&(buffer.ptr as usize))
            .copied();
        assert_eq!(
            allocated,
            Some(buffer.size),
            "a buffer checked in with another size than it was allocated with"
        );
        self.free.lock().unwrap().push(buffer);
    }

    /// Buffers free now.
    pub fn free_count(&self) -> usize {
        self.free.lock().unwrap().len()
    }

    /// Adds a free buffer of `size` bytes (larger than asked, say).
    pub fn seed(&self, size: usize) {
        let mut allocated = self.allocated.lock().unwrap();
        // SAFETY: as in `allocate`.
        let ptr = unsafe { alloc(Layout::from_size_align(size, ALIGN).unwrap()) };
        assert!(!ptr.is_null(), "out of memory");
        allocated.insert(ptr as usize, size);
        drop(allocated);
        self.free.lock().unwrap().push(PinnedBuffer { ptr, size });
    }
}

/// Three buffers for a, b and c.
pub struct PinnedAbcBuffers {
    pub a: PinnedBuffer,
    pub b: PinnedBuffer,
    pub c: PinnedBuffer,
}

impl PinnedAbcBuffers {
    /// Three buffers of `element_capacity` values of `scalar_size` bytes, or none.
    pub fn checkout(
        pool: &PinnedPool,
        element_capacity: usize,
        scalar_size: usize,
    ) -> Option<Self> {
        let bytes = element_capacity * scalar_size;
        let a = pool.checkout(bytes)?;
        let Some(b) = pool.checkout(bytes) else {
            pool.checkin(a);
            return None;
        };
        let Some(c) = pool.checkout(bytes) else {
            pool.checkin(a);
            pool.checkin(b);
            return None;
        };
        Some(Self { a, b, c })
    }
}

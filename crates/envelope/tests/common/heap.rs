//! A counting global allocator for the memory tests, included by the test files that
//! measure heap use (`#[path = "common/heap.rs"] mod heap;`): being the global allocator,
//! it cannot live in `common/mod.rs`, which every test file includes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A test that measures runs alone, so a measurement counts only its own test's heap;
/// the tests that measure nothing run beside each other (on both cores), never beside one
/// that measures.
static SERIAL: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// For a test that measures: no other test of the file runs meanwhile.
pub fn serial() -> std::sync::RwLockWriteGuard<'static, ()> {
    SERIAL.write().unwrap_or_else(|e| e.into_inner())
}

/// For a test that measures nothing: it runs beside the others that measure nothing.
#[allow(dead_code)] // (not every file has such tests)
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    SERIAL.read().unwrap_or_else(|e| e.into_inner())
}

/// The heap in use now; the peak is counted from here on.
pub fn start() -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    before
}

/// The most heap used above `before` since [`start`] returned it.
pub fn peak_since(before: usize) -> usize {
    PEAK.load(Ordering::Relaxed) - before
}

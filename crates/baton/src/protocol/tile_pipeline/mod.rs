//! Tile pipelines: typed shared-memory stages filled by TMA, on top of
//! [`ProducerConsumerPipeline`](crate::pipeline::ProducerConsumerPipeline).
//!
//! * [`Tile`]: a `ROWS × COLS` box of shared memory whose byte count
//!   ([`Tile::BYTES`]) the expect-tx arithmetic derives from;
//! * [`TilePayload`]: what one stage holds ([`StandardTilePayload`],
//!   [`BlockwiseFP8TilePayload`], [`BlockScaledTilePayload`], or your own);
//! * [`InputTilePipeline`]: TMA producer → MMA/consumer warpgroups, with a
//!   linear producer that must [`drain`](InputProducer::drain);
//! * [`OutputTilePipeline`] / [`OutputKPipeline`]: MMA → epilogue
//!   accumulator stages, per tile or per K block.
//!
//! The TMA operations are [`crate::arch::current::tma`] (PTX on the GPU, a
//! byte-exact simulation on the CPU backend), so a kernel written against
//! this module runs under `cargo test`:
//!
//! ```
//! use baton::arch::cpu::tma::{self, TensorMap};
//! use baton::arch::cpu::{CpuBlock, elect_one};
//! use baton::tensor_map::{ElemType, Swizzle, TensorMapDesc};
//! use baton::tile_pipeline::*;
//!
//! // A 20 × 16 f32 matrix, copied in 8 × 16 tiles through a 2-stage ring.
//! let (rows, cols) = (20usize, 16usize);
//! let src: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
//! let mut dst = vec![0f32; rows * cols];
//! let desc = |base: usize| TensorMapDesc::matrix_2d(ElemType::F32, base as u64, rows as u64, cols as u64, 64, 8, 16, Swizzle::None);
//! // SAFETY: the maps describe `src`/`dst`, which outlive them.
//! let load_map = unsafe { TensorMap::new(desc(src.as_ptr() as usize)) }.unwrap();
//! let store_map = unsafe { TensorMap::new(desc(dst.as_mut_ptr() as usize)) }.unwrap();
//!
//! struct OneTile;
//! impl TilePayload for OneTile {
//!     type Stage = Tile<f32, 8, 16>;
//!     const TMA_BYTES: u32 = Tile::<f32, 8, 16>::BYTES;
//! }
//! let block = CpuBlock::new(InputTileStorage::<OneTile, 2>::new());
//! block.run_warps(5, |warp, smem| {
//!     let pipe = InputTilePipeline::<OneTile, 2>::new(smem, c"copy");
//!     if warp.index() == 0 {
//!         elect_one(|| pipe.init(1)); // one signalling consumer thread
//!     }
//!     warp.sync_block();
//!     let tiles = rows.div_ceil(8) as i32;
//!     if warp.index() == 0 {
//!         elect_one(|| {
//!             let mut producer = pipe.producer();
//!             for t in 0..tiles {
//!                 let stage = producer.acquire();
//!                 stage.arrive_expect_tx();
//!                 // SAFETY: the producer holds the stage; the map is valid.
//!                 unsafe { tma::load_2d(&load_map, stage.tiles(), stage.barrier(), 0, 8 * t) };
//!             }
//!             producer.drain();
//!         });
//!     } else if warp.index() == 1 {
//!         let mut consumer = pipe.consumer();
//!         for t in 0..tiles {
//!             let stage = consumer.acquire_stage();
//!             // SAFETY: the stage is held; rows past 20 are clipped.
//!             unsafe { tma::store_2d(&store_map, stage.tiles(), 0, 8 * t) };
//!             tma::store_commit_group();
//!             tma::store_wait_group_read::<0>();
//!             elect_one(|| stage.release()); // one arrival on empty
//!         }
//!     }
//! });
//! assert_eq!(src, dst);
//! ```

mod input;
mod output;
mod payload;
mod tile;
mod tmem_output;

pub use input::*;
pub use output::*;
pub use payload::*;
pub use tile::*;
pub use tmem_output::*;

/// Drop body of a linear handle that was not consumed: a call to an
/// undefined extern symbol on the GPU (ptxas: "Unresolved extern function
/// 'baton_error__…'"), a panic on the CPU backend (unless already unwinding).
macro_rules! forgotten {
    ($sym:ident, $($fmt:tt)*) => {{
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: undefined on purpose; reaching this call means the kernel
        // does not assemble.
        unsafe {
            $sym()
        };
        #[cfg(not(target_arch = "nvptx64"))]
        if !std::thread::panicking() {
            panic!($($fmt)*);
        }
    }};
}
pub(crate) use forgotten;

/// The part every linear stage handle shares: a `stage:
/// ManuallyDrop<ProducerStage | ConsumerStage>` field, `index`/`phase`, a
/// private `take` (the only way out of the handle without tripping its
/// drop), and the `Drop` that reports a forgotten stage ([`forgotten!`]).
///
/// `linear_stage!(Name [impl generics] [type arguments], Inner, symbol)`;
/// the generics must name the lifetimes `'p`, `'a` and the const `STAGES`.
macro_rules! linear_stage {
    ($name:ident [$($params:tt)*] [$($args:tt)*], $inner:ident, $symbol:ident) => {
        impl<$($params)*> $name<$($args)*> {
            /// Stage index.
            #[inline(always)]
            pub fn index(&self) -> u32 {
                self.stage.index()
            }

            /// Phase parity waited for.
            #[inline(always)]
            pub fn phase(&self) -> u32 {
                self.stage.phase()
            }

            #[inline(always)]
            fn take(self) -> $inner<'p, 'a, STAGES> {
                let mut this = ManuallyDrop::new(self);
                // SAFETY: taken once; `this` is never dropped.
                unsafe { ManuallyDrop::take(&mut this.stage) }
            }
        }

        impl<$($params)*> Drop for $name<$($args)*> {
            #[inline(always)]
            fn drop(&mut self) {
                $crate::protocol::tile_pipeline::forgotten!(
                    $symbol,
                    concat!("baton: ", stringify!($name), " (stage {}, phase {}) dropped without release()"),
                    self.stage.index(),
                    self.stage.phase()
                );
            }
        }
    };
}
pub(crate) use linear_stage;

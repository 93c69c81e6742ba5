//! Stage index and phase parity of one role.

/// Where one role is in the ring: the stage it will use next and the phase
/// parity it waits for there.
///
/// Not `Copy` or `Clone`: two copies of a role's state that step
/// independently are a classic source of hangs, so each role owns exactly
/// one.
///
/// Rules (both CUTLASS and Mojo follow them):
/// * the producer starts at stage 0 with phase 1 — a fresh barrier is in
///   phase 0, so its first wait on each `empty` barrier passes at once;
/// * the consumer starts at stage 0 with phase 0 — it waits for the first
///   completion of each `full` barrier;
/// * [`step`](Self::step) moves to the next stage and flips the phase when
///   it wraps from `STAGES - 1` to 0.
///
/// ```
/// use baton::protocol::state::PipelineState;
/// let mut s = PipelineState::<2>::consumer_start();
/// assert_eq!((s.index(), s.phase()), (0, 0));
/// s.step();
/// assert_eq!((s.index(), s.phase()), (1, 0));
/// s.step();
/// assert_eq!((s.index(), s.phase()), (0, 1));
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct PipelineState<const STAGES: usize> {
    index: u32,
    phase: u32,
}

impl<const STAGES: usize> PipelineState<STAGES> {
    const VALID: () = assert!(
        STAGES >= 1 && STAGES <= 1024,
        "a pipeline needs 1..=1024 stages"
    );

    /// The producer's initial state: stage 0, phase 1.
    #[inline(always)]
    pub const fn producer_start() -> Self {
        let () = Self::VALID;
        Self { index: 0, phase: 1 }
    }

    /// The consumer's initial state: stage 0, phase 0.
    #[inline(always)]
    pub const fn consumer_start() -> Self {
        let () = Self::VALID;
        Self { index: 0, phase: 0 }
    }

    /// A state at an explicit position (for kernels that resume a ring, and
    /// for tests that need a deliberately wrong start).
    #[inline(always)]
    pub const fn at(index: u32, phase: u32) -> Self {
        let () = Self::VALID;
        assert!(
            (index as usize) < STAGES && phase <= 1,
            "stage index must be < STAGES and phase 0 or 1"
        );
        Self { index, phase }
    }

    /// Stage index, `0..STAGES`.
    #[inline(always)]
    pub const fn index(&self) -> u32 {
        self.index
    }

    /// Phase parity (0 or 1) this role waits for at [`index`](Self::index).
    #[inline(always)]
    pub const fn phase(&self) -> u32 {
        self.phase
    }

    /// Advances one stage; flips the phase on wrap-around.
    #[inline(always)]
    pub fn step(&mut self) {
        self.index += 1;
        if self.index == STAGES as u32 {
            self.index = 0;
            self.phase ^= 1;
        }
    }

    /// Advances `n` stages (the producer tail uses `STAGES`; a ping-pong
    /// consumer skips the other group's K blocks): the same as `n` calls of
    /// [`step`](Self::step), in constant time.
    ///
    /// ```
    /// use baton::protocol::state::PipelineState;
    /// let mut s = PipelineState::<3>::consumer_start();
    /// s.advance(7); // two wraps and one stage
    /// assert_eq!((s.index(), s.phase()), (1, 0));
    /// s.advance(2); // one more wrap
    /// assert_eq!((s.index(), s.phase()), (0, 1));
    /// ```
    #[inline(always)]
    pub fn advance(&mut self, n: u32) {
        // `n < 2^31` in every use (K blocks of a tile); the sum stays in u32
        // because `index < STAGES <= 1024`.
        let total = self.index + n;
        let wraps = total / STAGES as u32;
        self.index = total % STAGES as u32;
        self.phase ^= wraps & 1;
    }
}

//! Timelines of traced GEMM launches: the host side of
//! `baton_kernel_roles::trace`.
//!
//! A module built with `BATON_TRACE=1` (baton-runtime's build script turns
//! on the kernels' `trace` feature) has every Hopper GEMM CTA stamp
//! `%globaltimer` and `%clock64` at the points of
//! [`Event`]: entry, setup done, the producer's start and last loads, the
//! first full stage, the last main loop's end, the last store and the exit.
//! [`TraceBuffer::clear`] before one launch and [`TraceBuffer::read`] after
//! it give that launch's [`Timeline`]; [`Timeline::summary`] reduces it over
//! CTAs. Other builds have no trace array: [`TraceBuffer::of`] returns
//! `None`, and the kernels carry no stamp (their PTX is byte-identical
//! to an untraced build's).
//!
//! ```no_run
//! use baton_runtime::trace::TraceBuffer;
//! let gpu = baton_runtime::Gpu::new(0)?;
//! let kernels = gpu.load_kernels(baton_runtime::Variant::Release)?;
//! if let Some(trace) = TraceBuffer::of(&kernels)? {
//!     trace.clear(&gpu)?;
//!     // … enqueue one GEMM launch on gpu.stream() …
//!     gpu.synchronize()?;
//!     let timeline = trace.read(&gpu)?;
//!     println!("{}", timeline.summary().render());
//! }
//! # Ok::<(), baton_runtime::Error>(())
//! ```

use crate::error::Result;
use crate::{Gpu, Kernels};
pub use baton_kernel_roles::trace::{EVENTS, Event, MAX_CTAS, SYMBOL, WORDS, WORDS_PER_RECORD};
use cudarc::driver::{result, sys};

/// A traced module's trace array ([`SYMBOL`]).
#[derive(Clone, Copy, Debug)]
pub struct TraceBuffer {
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl TraceBuffer {
    /// The trace array of `kernels`, or `None` when the module was not
    /// built with `BATON_TRACE=1`.
    ///
    /// ```no_run
    /// let gpu = baton_runtime::Gpu::new(0)?;
    /// let k = gpu.load_kernels(baton_runtime::Variant::Release)?;
    /// println!("traced: {}", baton_runtime::trace::TraceBuffer::of(&k)?.is_some());
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn of(kernels: &Kernels) -> Result<Option<TraceBuffer>> {
        Ok(kernels
            .global(SYMBOL)?
            .filter(|&(_, bytes)| bytes == WORDS * 8)
            .map(|(ptr, bytes)| TraceBuffer { ptr, bytes }))
    }

    /// Enqueues zeroing the array on the GPU's stream (before the launch
    /// to trace: a record stays 0 where its event did not happen).
    ///
    /// ```no_run
    /// # let gpu = baton_runtime::Gpu::new(0)?;
    /// # let k = gpu.load_kernels(baton_runtime::Variant::Release)?;
    /// if let Some(t) = baton_runtime::trace::TraceBuffer::of(&k)? { t.clear(&gpu)?; }
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn clear(&self, gpu: &Gpu) -> Result<()> {
        gpu.context().bind_to_thread()?;
        // SAFETY: the module's global of `bytes` bytes; stream-ordered.
        unsafe { result::memset_d8_async(self.ptr, 0, self.bytes, gpu.stream().cu_stream()) }?;
        Ok(())
    }

    /// Waits for the GPU's stream and reads the array.
    ///
    /// ```no_run
    /// # let gpu = baton_runtime::Gpu::new(0)?;
    /// # let k = gpu.load_kernels(baton_runtime::Variant::Release)?;
    /// if let Some(t) = baton_runtime::trace::TraceBuffer::of(&k)? { let _ = t.read(&gpu)?.ctas.len(); }
    /// # Ok::<(), baton_runtime::Error>(())
    /// ```
    pub fn read(&self, gpu: &Gpu) -> Result<Timeline> {
        gpu.synchronize()?;
        let mut words = vec![0u64; WORDS];
        // SAFETY: `words` holds `bytes` bytes (checked in `of`); the stream
        // is idle.
        unsafe { result::memcpy_dtoh_sync(&mut words, self.ptr) }?;
        Ok(Timeline::from_words(&words))
    }
}

/// One CTA's records: per [`Event`], `(globaltimer ns, clock64)` or `None`.
#[derive(Clone, Debug, PartialEq)]
pub struct CtaTrace {
    /// `blockIdx.x`.
    pub cta: usize,
    /// The SM it ran on.
    pub sm: Option<u32>,
    /// Per event (index `Event as usize`; [`Event::SmId`]'s is `None`).
    pub events: [Option<(u64, u64)>; EVENTS],
}

impl CtaTrace {
    /// `event`'s timer, ns.
    ///
    /// ```
    /// use baton_runtime::trace::{CtaTrace, Event, EVENTS};
    /// let mut c = CtaTrace { cta: 0, sm: None, events: [None; EVENTS] };
    /// c.events[Event::Entry as usize] = Some((1000, 5));
    /// assert_eq!(c.ns(Event::Entry), Some(1000));
    /// ```
    pub fn ns(&self, event: Event) -> Option<u64> {
        self.events[event as usize].map(|(t, _)| t)
    }

    /// Cycles (`%clock64`, this CTA's SM) from `from` to `to`.
    ///
    /// ```
    /// use baton_runtime::trace::{CtaTrace, Event, EVENTS};
    /// let mut c = CtaTrace { cta: 0, sm: None, events: [None; EVENTS] };
    /// c.events[Event::Entry as usize] = Some((1000, 5));
    /// c.events[Event::Exit as usize] = Some((3000, 4005));
    /// assert_eq!(c.cycles(Event::Entry, Event::Exit), Some(4000));
    /// ```
    pub fn cycles(&self, from: Event, to: Event) -> Option<u64> {
        let (a, b) = (self.events[from as usize]?, self.events[to as usize]?);
        b.1.checked_sub(a.1)
    }
}

/// A traced launch: the CTAs that recorded anything, in `blockIdx.x` order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// CTAs with an [`Event::Entry`] record.
    pub ctas: Vec<CtaTrace>,
}

/// The phases [`Timeline::summary`] reports, each from one event to
/// another within a CTA, in `%clock64` cycles.
pub const PHASES: [(&str, Event, Event); 7] = [
    ("setup", Event::Entry, Event::Synced),
    (
        "synced → producer start",
        Event::Synced,
        Event::ProducerStart,
    ),
    (
        "producer start → first full",
        Event::ProducerStart,
        Event::FirstFull,
    ),
    (
        "first full → last main loop",
        Event::FirstFull,
        Event::LastMainloopDone,
    ),
    (
        "last main loop → last store",
        Event::LastMainloopDone,
        Event::LastStoreIssued,
    ),
    ("store drain", Event::LastStoreIssued, Event::Exit),
    ("entry → exit", Event::Entry, Event::Exit),
];

/// Minimum, median and maximum of a set, in µs or cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Values counted.
    pub count: usize,
    /// Least.
    pub min: f64,
    /// Median (upper).
    pub median: f64,
    /// Greatest.
    pub max: f64,
}

impl Spread {
    /// The spread of `v`; `None` when empty.
    ///
    /// ```
    /// let s = baton_runtime::trace::Spread::of(vec![3.0, 1.0, 2.0]).unwrap();
    /// assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
    /// ```
    pub fn of(mut v: Vec<f64>) -> Option<Spread> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Spread {
            count: v.len(),
            min: v[0],
            median: v[v.len() / 2],
            max: v[v.len() - 1],
        })
    }
}

/// A [`Timeline`] reduced over its CTAs.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineSummary {
    /// CTAs traced.
    pub ctas: usize,
    /// Distinct SMs they ran on.
    pub sms: usize,
    /// Per event: its time after the first CTA's entry, µs, over CTAs.
    pub events: Vec<(Event, Spread)>,
    /// Per [`PHASES`] entry: cycles within a CTA, over CTAs.
    pub phases: Vec<(&'static str, Spread)>,
    /// First entry to last exit, µs (the span of the CTAs' work).
    pub span_us: f64,
    /// The SM clock, GHz: entry → exit cycles over ns, median over CTAs.
    pub sm_ghz: f64,
}

impl Timeline {
    /// Parses the array's words ([`WORDS`] `u64`s).
    ///
    /// ```
    /// use baton_runtime::trace::{Event, Timeline, WORDS, WORDS_PER_RECORD, EVENTS};
    /// let mut w = vec![0u64; WORDS];
    /// w[(EVENTS + Event::Entry as usize) * WORDS_PER_RECORD] = 7; // CTA 1 entered
    /// let t = Timeline::from_words(&w);
    /// assert_eq!(t.ctas.len(), 1);
    /// assert_eq!(t.ctas[0].cta, 1);
    /// ```
    pub fn from_words(words: &[u64]) -> Timeline {
        let record = |cta: usize, e: usize| {
            let i = (cta * EVENTS + e) * WORDS_PER_RECORD;
            (
                words.get(i).copied().unwrap_or(0),
                words.get(i + 1).copied().unwrap_or(0),
            )
        };
        let ctas = (0..MAX_CTAS)
            .filter(|&cta| record(cta, Event::Entry as usize).0 != 0)
            .map(|cta| {
                let mut events = [None; EVENTS];
                for e in Event::ALL {
                    let (t, c) = record(cta, e as usize);
                    if e != Event::SmId && t != 0 {
                        events[e as usize] = Some((t, c));
                    }
                }
                let (sm, present) = record(cta, Event::SmId as usize);
                CtaTrace {
                    cta,
                    sm: (present != 0).then_some(sm as u32),
                    events,
                }
            })
            .collect();
        Timeline { ctas }
    }

    /// The earliest entry of any CTA, ns (`%globaltimer`; 0 without CTAs):
    /// the origin of [`summary`](Self::summary)'s and [`csv`](Self::csv)'s
    /// times.
    fn first_entry_ns(&self) -> u64 {
        self.ctas
            .iter()
            .filter_map(|c| c.ns(Event::Entry))
            .min()
            .unwrap_or(0)
    }

    /// One CSV line per CTA, prefixed by `label` (e.g. the shape): the
    /// CTA, its SM, then per event (header [`Timeline::csv_header`]) its
    /// time after the first entry in µs, empty where not recorded — to
    /// tell slow CTAs apart by where they ran.
    ///
    /// ```
    /// use baton_runtime::trace::{CtaTrace, Event, Timeline, EVENTS};
    /// let mut events = [None; EVENTS];
    /// events[Event::Entry as usize] = Some((1000, 0));
    /// events[Event::Exit as usize] = Some((3500, 4500));
    /// let t = Timeline { ctas: vec![CtaTrace { cta: 3, sm: Some(17), events }] };
    /// let csv = t.csv("64x64x64");
    /// assert!(csv.starts_with("64x64x64,3,17,0.000,"));
    /// assert!(csv.trim_end().ends_with(",2.500"));
    /// ```
    pub fn csv(&self, label: &str) -> String {
        let t0 = self.first_entry_ns();
        let mut out = String::new();
        for c in &self.ctas {
            let sm = c.sm.map_or(String::new(), |s| s.to_string());
            let times: Vec<String> = Event::ALL
                .iter()
                .filter(|&&e| e != Event::SmId)
                .map(|&e| {
                    c.ns(e).map_or(String::new(), |t| {
                        format!("{:.3}", t.saturating_sub(t0) as f64 / 1e3)
                    })
                })
                .collect();
            out.push_str(&format!("{label},{},{sm},{}\n", c.cta, times.join(",")));
        }
        out
    }

    /// The header of [`csv`](Self::csv)'s lines: `shape,cta,sm` and the
    /// events' names (µs after the first entry).
    ///
    /// ```
    /// assert!(baton_runtime::trace::Timeline::csv_header().starts_with("shape,cta,sm,entry,"));
    /// ```
    pub fn csv_header() -> String {
        let names: Vec<&str> = Event::ALL
            .iter()
            .filter(|&&e| e != Event::SmId)
            .map(|e| e.name())
            .collect();
        format!("shape,cta,sm,{}", names.join(",")).replace(' ', "_")
    }

    /// Event times relative to the first entry (µs) and phase cycles,
    /// each as a [`Spread`] over the CTAs that recorded them.
    ///
    /// ```
    /// use baton_runtime::trace::{CtaTrace, Event, Timeline, EVENTS};
    /// let cta = |i: usize, t0: u64| {
    ///     let mut events = [None; EVENTS];
    ///     events[Event::Entry as usize] = Some((t0, 0));
    ///     events[Event::Exit as usize] = Some((t0 + 2000, 3600));
    ///     CtaTrace { cta: i, sm: Some(i as u32), events }
    /// };
    /// let s = Timeline { ctas: vec![cta(0, 1000), cta(1, 2000)] }.summary();
    /// assert_eq!((s.ctas, s.sms), (2, 2));
    /// assert_eq!(s.span_us, 3.0);
    /// assert!((s.sm_ghz - 1.8).abs() < 1e-9);
    /// ```
    pub fn summary(&self) -> TimelineSummary {
        let t0 = self.first_entry_ns();
        let rel = |t: u64| t.saturating_sub(t0) as f64 / 1e3;
        let events = Event::ALL
            .iter()
            .filter(|&&e| e != Event::SmId)
            .filter_map(|&e| {
                Spread::of(self.ctas.iter().filter_map(|c| c.ns(e)).map(rel).collect())
                    .map(|s| (e, s))
            })
            .collect();
        let phases = PHASES
            .iter()
            .filter_map(|&(name, from, to)| {
                Spread::of(
                    self.ctas
                        .iter()
                        .filter_map(|c| c.cycles(from, to))
                        .map(|c| c as f64)
                        .collect(),
                )
                .map(|s| (name, s))
            })
            .collect();
        let last_exit = self
            .ctas
            .iter()
            .filter_map(|c| c.ns(Event::Exit))
            .max()
            .unwrap_or(t0);
        let ghz = Spread::of(
            self.ctas
                .iter()
                .filter_map(|c| {
                    let ns = c.ns(Event::Exit)?.checked_sub(c.ns(Event::Entry)?)?;
                    let cycles = c.cycles(Event::Entry, Event::Exit)?;
                    (ns > 0).then(|| cycles as f64 / ns as f64)
                })
                .collect(),
        )
        .map_or(f64::NAN, |s| s.median);
        let mut sms: Vec<u32> = self.ctas.iter().filter_map(|c| c.sm).collect();
        sms.sort_unstable();
        sms.dedup();
        TimelineSummary {
            ctas: self.ctas.len(),
            sms: sms.len(),
            events,
            phases,
            span_us: rel(last_exit),
            sm_ghz: ghz,
        }
    }
}

impl TimelineSummary {
    /// A text table: events (µs after the first entry) and phases
    /// (cycles, and µs at [`sm_ghz`](Self::sm_ghz)).
    ///
    /// ```
    /// let s = baton_runtime::trace::Timeline::default().summary();
    /// assert!(s.render().contains("0 CTAs"));
    /// ```
    pub fn render(&self) -> String {
        let mut out = format!(
            "{} CTAs on {} SMs; first entry → last exit {:.2} µs; SM clock {:.2} GHz\n",
            self.ctas, self.sms, self.span_us, self.sm_ghz
        );
        out.push_str("  event (µs after first entry)   CTAs     min   median      max\n");
        for (e, s) in &self.events {
            out.push_str(&format!(
                "  {:<30} {:>5} {:>7.2} {:>8.2} {:>8.2}\n",
                e.name(),
                s.count,
                s.min,
                s.median,
                s.max
            ));
        }
        out.push_str(
            "  phase (cycles; µs)             CTAs     min   median      max   median µs\n",
        );
        for (name, s) in &self.phases {
            out.push_str(&format!(
                "  {:<30} {:>5} {:>7.0} {:>8.0} {:>8.0} {:>11.2}\n",
                name,
                s.count,
                s.min,
                s.median,
                s.max,
                s.median / self.sm_ghz / 1e3
            ));
        }
        out
    }
}

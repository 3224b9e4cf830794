//! `--save`'s choice of requests.

/// Chooses the requests `--save` writes: each with probability `share`,
/// from a generator of its own, so that saving never changes the request
/// stream a seed gives.
pub(super) struct Sampler {
    /// Keep a request when the next draw is below this (0: none).
    below: u64,
    state: u64,
    /// Only reported phases are sampled (not an unreported preload).
    pub(super) active: bool,
}

impl Sampler {
    pub(super) fn new(share: Option<f64>, seed: u64) -> Sampler {
        let below = match share {
            None => 0,
            Some(s) if s >= 1.0 => u64::MAX,
            Some(s) => (s.max(0.0) * u64::MAX as f64) as u64,
        };
        Sampler {
            below,
            state: seed ^ 0x5DEE_CE66_D1CE_4E5B,
            active: false,
        }
    }

    /// Whether to keep the request just answered.
    #[inline]
    pub(super) fn keep(&mut self) -> bool {
        if self.below == 0 || !self.active {
            return false;
        }
        if self.below == u64::MAX {
            return true;
        }
        // splitmix64: one multiply-xorshift step per measured request.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) < self.below
    }
}

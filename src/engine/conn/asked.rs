//! The keys each request in flight asked for, kept until it is answered so
//! that the codec can check the keys its reply names
//! (`Protocol::parse`'s `asked`). One buffer per slot, reused: once warm,
//! keeping a request's keys is a copy, not an allocation.

/// The slot of a request that kept no keys: it reads as none, and
/// releasing it does nothing.
pub const NONE: u32 = u32::MAX;

#[derive(Default)]
pub struct AskedKeys {
    slots: Vec<Vec<u8>>,
    free: Vec<u32>,
}

impl AskedKeys {
    /// Keeps `keys`; returns the slot to read and release them by.
    pub fn keep(&mut self, keys: &[u8]) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(Vec::new());
                (self.slots.len() - 1) as u32
            }
        };
        let buf = &mut self.slots[slot as usize];
        buf.clear();
        buf.extend_from_slice(keys);
        slot
    }

    /// The keys kept in `slot`; none for a slot never kept.
    pub fn get(&self, slot: u32) -> &[u8] {
        self.slots.get(slot as usize).map_or(&[], Vec::as_slice)
    }

    /// Frees `slot` for the next request.
    pub fn release(&mut self, slot: u32) {
        if (slot as usize) < self.slots.len() {
            self.free.push(slot);
        }
    }

    /// Frees every slot (the connection closed).
    pub fn clear(&mut self) {
        self.free.clear();
        self.free.extend((0..self.slots.len() as u32).rev());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_keep_their_own_keys() {
        let mut asked = AskedKeys::default();
        let a = asked.keep(b"a b");
        let b = asked.keep(b"c");
        assert_eq!((asked.get(a), asked.get(b)), (&b"a b"[..], &b"c"[..]));
        asked.release(a);
        let d = asked.keep(b"d");
        assert_eq!(d, a);
        assert_eq!((asked.get(d), asked.get(b)), (&b"d"[..], &b"c"[..]));
        asked.clear();
        let reused = [asked.keep(b"x"), asked.keep(b"y")];
        assert_eq!(reused, [0, 1]);
        assert_eq!(asked.get(99), b"");
        assert_eq!(asked.get(NONE), b"");
        asked.release(NONE);
        assert_eq!(asked.keep(b"z"), 2);
    }
}

//! A hash table from 16-byte ids to values whose slot for an id can be prefetched before the id is
//! looked up: the topic index's (`topic_index.rs`). std's `HashMap` keeps its control bytes and its
//! entries in two places and says nowhere where an id's entry lies, so a lookup there is two cache
//! misses that nothing can start early; here an id's key and value share one slot, found from its
//! hash alone (`prefetch`).
//!
//! Open addressing with linear probing, at most half full, removal by shifting the probe run back
//! (no tombstones). Hashed with foldhash seeded at random per table, as `HashMap` would be: a forged
//! log cannot be made of ids known in advance to collide.

use std::hash::BuildHasher;

/// A 16-byte id (a topic id as a uuid field is read).
pub type Id = [u8; 16];

pub struct IdTable<V> {
    slots: Vec<Option<(Id, V)>>,
    len: usize,
    hasher: foldhash::fast::RandomState,
}

impl<V> Default for IdTable<V> {
    fn default() -> Self {
        IdTable { slots: Vec::new(), len: 0, hasher: foldhash::fast::RandomState::default() }
    }
}

impl<V> IdTable<V> {
    /// The slot an id's probe starts at (`slots` is a power of two long, and not empty).
    fn home(&self, id: &Id) -> usize {
        (self.hasher.hash_one(id) as usize) & (self.slots.len() - 1)
    }

    /// Where `id` is, if it is here.
    fn find(&self, id: &Id) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(id);
        loop {
            match &self.slots[i] {
                None => return None,
                Some((k, _)) if k == id => return Some(i),
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    pub fn get(&self, id: &Id) -> Option<&V> {
        self.find(id).and_then(|i| self.slots[i].as_ref().map(|(_, v)| v))
    }

    pub fn get_mut(&mut self, id: &Id) -> Option<&mut V> {
        self.find(id).and_then(|i| self.slots[i].as_mut().map(|(_, v)| v))
    }

    /// The address of the slot `id`'s probe starts at, for a prefetch (null when empty).
    pub fn home_address(&self, id: &Id) -> *const u8 {
        if self.slots.is_empty() {
            return std::ptr::null();
        }
        (&self.slots[self.home(id)] as *const Option<(Id, V)>).cast()
    }

    /// Put `value` at `id`; false (the table unchanged) if it had to grow and the memory was not
    /// there: an allocation that fails in Rust would abort the process, so it is asked for first.
    pub fn insert(&mut self, id: Id, value: V) -> bool {
        if (self.len + 1) * 2 > self.slots.len() && !self.grow() {
            return false;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(&id);
        loop {
            match &mut self.slots[i] {
                None => {
                    self.slots[i] = Some((id, value));
                    self.len += 1;
                    return true;
                }
                Some((k, v)) if *k == id => {
                    *v = value;
                    return true;
                }
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    pub fn remove(&mut self, id: &Id) -> Option<V> {
        let mut hole = self.find(id)?;
        let (_, gone) = self.slots[hole].take()?;
        self.len -= 1;
        // shift back each later entry of the run whose probe may pass the hole
        let mask = self.slots.len() - 1;
        let mut j = (hole + 1) & mask;
        while let Some((k, _)) = &self.slots[j] {
            let home = self.home(k);
            // the entry may move to the hole when its home is not cyclically within (hole, j]
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots[hole] = self.slots[j].take();
                hole = j;
            }
            j = (j + 1) & mask;
        }
        Some(gone)
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.len = 0;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    fn grow(&mut self) -> bool {
        let size = (self.slots.len() * 2).max(16);
        let mut slots = Vec::new();
        if slots.try_reserve_exact(size).is_err() {
            return false;
        }
        slots.resize_with(size, || None);
        let old = std::mem::replace(&mut self.slots, slots);
        self.len = 0;
        for (k, v) in old.into_iter().flatten() {
            self.insert(k, v); // room enough: no growing again
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against std's HashMap, through inserts, overwrites, removals and clears of ids that share
    /// few hash bits (a small table collides often).
    #[test]
    fn behaves_as_a_map() {
        let mut t: IdTable<u32> = IdTable::default();
        let mut m = std::collections::HashMap::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut id = [0u8; 16];
            id[0] = (x % 300) as u8;
            id[1] = ((x >> 8) % 3) as u8;
            match x % 7 {
                0..=3 => {
                    t.insert(id, step);
                    m.insert(id, step);
                }
                4 | 5 => assert_eq!(t.remove(&id), m.remove(&id)),
                _ if step % 5000 == 0 => {
                    t.clear();
                    m.clear();
                }
                _ => {}
            }
            assert_eq!(t.get(&id), m.get(&id));
            assert_eq!(t.len(), m.len());
        }
        for (k, v) in &m {
            assert_eq!(t.get(k), Some(v));
        }
    }
}

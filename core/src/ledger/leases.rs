//! A ledger's leases by token: [`Leases`].
//!
//! Every command reads every lease of its workspace, and most change one or two. So the leases
//! read from a journal record stay as they were read: one list sorted by token, each token a
//! range of the record's bytes (no string of its own, no tree built), shared by every copy of
//! the ledger. What a command changes is kept beside that list: which of the read leases are
//! gone, and the leases added since, by token. Reading a ledger of many leases allocates a few
//! buffers, not a few per lease, and a save can tell what changed since the record was read
//! without comparing a single token (see [`crate::journal`]'s delta records).

use std::collections::BTreeMap;
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

use super::Recorded;

/// Leases read from one record, sorted by token, each token once: the range of each token in
/// the buffer the leases' JSON is kept in.
#[derive(Debug)]
pub(crate) struct ReadLeases {
    buffer: Arc<[u8]>,
    leases: Vec<(Range<usize>, Recorded)>,
}

impl ReadLeases {
    /// `leases` with their tokens' ranges of `buffer`, when every range is inside it, valid
    /// UTF-8, and the tokens strictly increase (a record lists its leases so; any other list is
    /// read into a map instead, which sorts it); otherwise `leases` back.
    pub(crate) fn new(
        buffer: Arc<[u8]>,
        leases: Vec<(Range<usize>, Recorded)>,
    ) -> Result<ReadLeases, Vec<(Range<usize>, Recorded)>> {
        let mut last: Option<&[u8]> = None;
        for (range, _) in &leases {
            let token = buffer.get(range.clone());
            // A token is mostly ASCII, told eight bytes at a time.
            let valid = token.filter(|t| t.is_ascii() || std::str::from_utf8(t).is_ok());
            match valid {
                Some(token) if last.is_none_or(|last| last < token) => last = Some(token),
                _ => return Err(leases),
            }
        }
        Ok(ReadLeases { buffer, leases })
    }

    /// The token of the lease at `index`; empty if out of range (never: [`ReadLeases::new`]
    /// checked every range). Read at every step of every walk over the leases, so not checked
    /// again.
    fn token(&self, index: usize) -> &str {
        let bytes = self
            .leases
            .get(index)
            .and_then(|(range, _)| self.buffer.get(range.clone()))
            .unwrap_or_default();
        // SAFETY: `ReadLeases::new` checked that each lease's range of `buffer` is valid UTF-8,
        // and neither changes after: the fields are private and never written, and the buffer
        // is shared read-only (`Arc<[u8]>`). An empty slice is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// Where `token` is, by binary search.
    fn find(&self, token: &str) -> Option<usize> {
        self.leases
            .binary_search_by(|(range, _)| {
                let bytes = self.buffer.get(range.clone()).unwrap_or_default();
                bytes.cmp(token.as_bytes())
            })
            .ok()
    }

    fn len(&self) -> usize {
        self.leases.len()
    }
}

/// A ledger's leases by token, in token order: those read from a record (less those gone since)
/// and those added since. Behaves as a map of tokens to leases (`leases_behave_as_a_map` holds
/// it to `BTreeMap` over any reading and any changes).
#[derive(Clone, Debug, Default)]
pub(crate) struct Leases {
    /// Shared by every copy of the ledger (one thread's: a lease's JSON is kept once written).
    read: Option<Rc<ReadLeases>>,
    /// Whether each lease of `read` is gone: empty until one is.
    gone: Vec<bool>,
    gone_count: usize,
    /// Leases added since the record was read, by token: never the token of a read lease that
    /// is not gone.
    added: BTreeMap<String, Recorded>,
}

impl Leases {
    /// No lease.
    pub fn new() -> Leases {
        Leases::default()
    }

    /// The leases `read` from a record, none changed.
    pub(crate) fn from_read(read: ReadLeases) -> Leases {
        Leases {
            read: Some(Rc::new(read)),
            ..Leases::default()
        }
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.read.as_ref().map_or(0, |read| read.len()) - self.gone_count + self.added.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn is_gone(&self, index: usize) -> bool {
        self.gone.get(index).copied().unwrap_or(false)
    }

    /// Where `token`'s read lease is, unless it is gone.
    fn find_read(&self, token: &str) -> Option<(&ReadLeases, usize)> {
        let read = self.read.as_deref()?;
        read.find(token)
            .filter(|index| !self.is_gone(*index))
            .map(|index| (read, index))
    }

    /// The lease of `token`.
    pub fn get(&self, token: &str) -> Option<&Recorded> {
        if let Some(lease) = self.added.get(token) {
            return Some(lease);
        }
        let (read, index) = self.find_read(token)?;
        read.leases.get(index).map(|(_, lease)| lease)
    }

    /// Whether `token` has a lease.
    pub fn contains_key(&self, token: &str) -> bool {
        self.get(token).is_some()
    }

    /// Records `lease` under `token`, in place of the lease it had.
    pub fn insert(&mut self, token: String, lease: Recorded) {
        self.drop_read(&token);
        self.added.insert(token, lease);
    }

    /// Removes `token`'s lease, and returns it.
    pub fn remove(&mut self, token: &str) -> Option<Recorded> {
        if let Some(lease) = self.added.remove(token) {
            return Some(lease);
        }
        self.drop_read(token)
    }

    /// Marks `token`'s read lease gone; a copy of it (its parts are shared).
    fn drop_read(&mut self, token: &str) -> Option<Recorded> {
        let (read, index) = self.find_read(token)?;
        let lease = read.leases.get(index).map(|(_, lease)| lease.clone());
        let count = read.len();
        if self.gone.is_empty() {
            self.gone = vec![false; count];
        }
        if let Some(gone) = self.gone.get_mut(index) {
            *gone = true;
            self.gone_count += 1;
        }
        lease
    }

    /// Each token and its lease, in token order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            leases: self,
            read_at: 0,
            added: self.added.iter().peekable(),
        }
    }

    /// The tokens, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(token, _)| token)
    }

    /// The leases, in token order.
    pub fn values(&self) -> impl Iterator<Item = &Recorded> {
        self.iter().map(|(_, lease)| lease)
    }

    /// Whether these are the leases read from a record, none gone and none added.
    pub(crate) fn is_as_read(&self) -> bool {
        self.gone_count == 0 && self.added.is_empty()
    }

    /// The leases read from a record, when these are them less those gone, plus those added:
    /// what a delta record written against that record lists.
    pub(crate) fn read_from(&self) -> Option<&Rc<ReadLeases>> {
        self.read.as_ref()
    }

    /// The tokens of the read leases gone, in order.
    pub(crate) fn gone(&self) -> impl Iterator<Item = &str> {
        let read = self.read.as_deref();
        self.gone
            .iter()
            .enumerate()
            .filter(|(_, gone)| **gone)
            .filter_map(move |(index, _)| read.map(|read| read.token(index)))
    }

    /// The leases added since the record was read, in token order.
    pub(crate) fn added(&self) -> impl Iterator<Item = (&str, &Recorded)> {
        self.added
            .iter()
            .map(|(token, lease)| (token.as_str(), lease))
    }
}

impl ReadLeases {
    /// The tokens, in order.
    pub(crate) fn tokens(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|index| self.token(index))
    }
}

/// [`Leases::iter`]: the read leases not gone and the added ones, merged by token.
pub(crate) struct Iter<'a> {
    leases: &'a Leases,
    read_at: usize,
    added: std::iter::Peekable<std::collections::btree_map::Iter<'a, String, Recorded>>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a Recorded);

    fn next(&mut self) -> Option<Self::Item> {
        let leases = self.leases;
        let read = leases.read.as_deref();
        while read.is_some_and(|read| self.read_at < read.len()) && leases.is_gone(self.read_at) {
            self.read_at += 1;
        }
        let next_read = read.and_then(|read| {
            let (_, lease) = read.leases.get(self.read_at)?;
            Some((read.token(self.read_at), lease))
        });
        match (next_read, self.added.peek()) {
            (Some((token, lease)), Some((added, _))) if token < added.as_str() => {
                self.read_at += 1;
                Some((token, lease))
            }
            (Some((token, lease)), None) => {
                self.read_at += 1;
                Some((token, lease))
            }
            // A read lease is never also added (unless gone), so the tokens differ.
            (_, Some(_)) => self
                .added
                .next()
                .map(|(token, lease)| (token.as_str(), lease)),
            (None, None) => None,
        }
    }
}

impl<'a> IntoIterator for &'a Leases {
    type Item = (&'a str, &'a Recorded);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Leases {
    type Item = (String, Recorded);
    type IntoIter = std::vec::IntoIter<(String, Recorded)>;

    /// Each token and its lease, in token order (owned: the tokens are copied).
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
            .map(|(token, lease)| (token.to_string(), lease.clone()))
            .collect::<Vec<_>>()
            .into_iter()
    }
}

impl FromIterator<(String, Recorded)> for Leases {
    /// Of a token given twice, the last lease (as a map collects).
    fn from_iter<I: IntoIterator<Item = (String, Recorded)>>(leases: I) -> Self {
        Leases {
            added: leases.into_iter().collect(),
            ..Leases::default()
        }
    }
}

/// For tests only: the library never indexes (a missing token would panic).
#[cfg(test)]
impl std::ops::Index<&str> for Leases {
    type Output = Recorded;

    /// The lease of `token`; panics without one (as a map does).
    #[allow(clippy::panic)]
    fn index(&self, token: &str) -> &Recorded {
        match self.get(token) {
            Some(lease) => lease,
            None => panic!("no lease {token:?}"),
        }
    }
}

impl PartialEq for Leases {
    fn eq(&self, other: &Leases) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Leases {}

impl serde::Serialize for Leases {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::ledger::LeaseJson;
    use crate::ledger::tests::lock_lease as lease;
    use proptest::prelude::*;

    /// Leases read from one buffer holding `tokens` (sorted, distinct), each with its index as
    /// its order.
    fn read(tokens: &[String]) -> Leases {
        let joined: String = tokens.concat();
        let buffer: Arc<[u8]> = joined.as_bytes().into();
        let mut at = 0;
        let leases = tokens
            .iter()
            .enumerate()
            .map(|(n, token)| {
                let range = at..at + token.len();
                at += token.len();
                let json = LeaseJson::new(&buffer, range.clone(), 0);
                let record = lease(n as u64);
                let read = Recorded::with_json(record.record(), json);
                (range, read)
            })
            .collect();
        Leases::from_read(ReadLeases::new(buffer, leases).unwrap())
    }

    #[derive(Debug, Clone)]
    enum Change {
        Insert(String, u64),
        Remove(String),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            ("[abc]{0,3}", 100..200u64).prop_map(|(t, s)| Change::Insert(t, s)),
            "[abc]{0,3}".prop_map(Change::Remove),
        ]
    }

    proptest! {
        /// For any leases read and any inserts and removes, the leases answer every question as
        /// a map given the same would: each lookup, what a remove returns, the length, the
        /// order, and what is gone and added against what was read.
        #[test]
        fn leases_behave_as_a_map(
            tokens in prop::collection::btree_set("[abc]{0,3}", 0..12),
            changes in prop::collection::vec(change(), 0..24),
        ) {
            let tokens: Vec<String> = tokens.into_iter().collect();
            let mut leases = read(&tokens);
            let mut map: BTreeMap<String, u64> =
                tokens.iter().enumerate().map(|(n, t)| (t.clone(), n as u64)).collect();
            for change in changes {
                match change {
                    Change::Insert(token, seq) => {
                        leases.insert(token.clone(), lease(seq));
                        map.insert(token, seq);
                    }
                    Change::Remove(token) => {
                        prop_assert_eq!(
                            leases.remove(&token).map(|l| l.seq()),
                            map.remove(&token)
                        );
                    }
                }
                prop_assert_eq!(leases.len(), map.len());
                prop_assert_eq!(leases.is_empty(), map.is_empty());
            }
            let listed: Vec<(String, u64)> =
                leases.iter().map(|(t, l)| (t.to_string(), l.seq())).collect();
            let expected: Vec<(String, u64)> = map.clone().into_iter().collect();
            prop_assert_eq!(&listed, &expected);
            for token in ["", "a", "ab", "abc", "b", "cc"] {
                prop_assert_eq!(leases.get(token).map(Recorded::seq), map.get(token).copied());
            }
            // Against what was read: the read leases now gone or replaced, and the leases added.
            let gone: Vec<&str> = leases.gone().collect();
            let expected_gone: Vec<&str> = tokens
                .iter()
                .enumerate()
                .filter(|(n, t)| map.get(*t) != Some(&(*n as u64)))
                .map(|(_, t)| t.as_str())
                .collect();
            prop_assert_eq!(gone, expected_gone);
            let mut rebuilt: BTreeMap<String, u64> = tokens
                .iter()
                .enumerate()
                .map(|(n, t)| (t.clone(), n as u64))
                .filter(|(t, _)| !leases.gone().any(|g| g == t))
                .collect();
            rebuilt.extend(leases.added().map(|(t, l)| (t.to_string(), l.seq())));
            prop_assert_eq!(rebuilt, map);
        }
    }

    #[test]
    fn read_leases_must_be_sorted_distinct_and_inside_their_buffer() {
        let buffer: Arc<[u8]> = b"abb\xff".as_slice().into();
        let one = |range: Range<usize>| (range, lease(0));
        assert!(ReadLeases::new(buffer.clone(), vec![one(0..1), one(1..3)]).is_ok());
        // Out of order, twice, outside the buffer, not UTF-8.
        assert!(ReadLeases::new(buffer.clone(), vec![one(1..3), one(0..1)]).is_err());
        assert!(ReadLeases::new(buffer.clone(), vec![one(1..2), one(2..3)]).is_err());
        assert!(ReadLeases::new(buffer.clone(), vec![one(3..9)]).is_err());
        assert!(ReadLeases::new(buffer, vec![one(3..4)]).is_err());
    }
}

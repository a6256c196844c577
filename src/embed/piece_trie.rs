//! The vocabulary as a byte trie, for WordPiece's greedy longest match.
//!
//! WordPiece takes, at each position of a word, the longest vocabulary piece
//! starting there. Looking pieces up in a hash map means trying every length
//! from the longest possible down, hashing the slice each time: a word the
//! vocabulary does not hold whole (a name, an identifier, a rare word) cost
//! a dozen hashes per piece, and that was a fifth of the ingestion workers'
//! time. One walk down this trie finds the same piece reading each byte
//! once.
//!
//! The trie is flattened into arrays (children of a node are a sorted run of
//! edges) so it is a few allocations whatever the vocabulary's size, and it
//! is immutable once built, so threads share it freely.

/// Marks a node at which no piece ends.
const NO_PIECE: u32 = u32::MAX;

/// Pieces (byte strings) and their ids. See the module documentation.
pub(super) struct PieceTrie {
    /// Node `n`'s children are the edges `first_edge[n]..first_edge[n + 1]`.
    first_edge: Vec<u32>,
    /// Edge labels, sorted within each node's run.
    edge_byte: Vec<u8>,
    /// The child node each edge leads to.
    edge_child: Vec<u32>,
    /// Id of the piece ending at each node, or [`NO_PIECE`].
    piece: Vec<u32>,
}

impl PieceTrie {
    /// Builds the trie. A piece given twice keeps its last id, as a map would.
    pub(super) fn build<'p>(pieces: impl IntoIterator<Item = (&'p str, u32)>) -> PieceTrie {
        // Sorted pieces share their prefixes with their predecessor, so the
        // trie grows along one path at a time: `path[d]` is the node at depth
        // `d` of the piece inserted last.
        let mut sorted: Vec<(&[u8], u32)> = pieces
            .into_iter()
            .map(|(p, id)| (p.as_bytes(), id))
            .collect();
        // Stable: of equal pieces the last given stays last and wins below.
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut children: Vec<Vec<(u8, u32)>> = vec![Vec::new()];
        let mut piece = vec![NO_PIECE];
        let mut path: Vec<u32> = vec![0];
        let mut previous: &[u8] = &[];
        for (bytes, id) in sorted {
            let shared = bytes
                .iter()
                .zip(previous)
                .take_while(|(a, b)| a == b)
                .count();
            path.truncate(shared + 1);
            for &b in &bytes[shared..] {
                let parent = *path.last().unwrap_or(&0) as usize;
                let node = piece.len() as u32;
                children[parent].push((b, node));
                children.push(Vec::new());
                piece.push(NO_PIECE);
                path.push(node);
            }
            piece[*path.last().unwrap_or(&0) as usize] = id;
            previous = bytes;
        }
        // Children were pushed in byte order (the pieces were sorted), so
        // each run is already sorted for the binary search.
        let mut first_edge = Vec::with_capacity(children.len() + 1);
        let mut edge_byte = Vec::with_capacity(children.len());
        let mut edge_child = Vec::with_capacity(children.len());
        for node in &children {
            first_edge.push(edge_byte.len() as u32);
            for &(b, child) in node {
                edge_byte.push(b);
                edge_child.push(child);
            }
        }
        first_edge.push(edge_byte.len() as u32);
        PieceTrie {
            first_edge,
            edge_byte,
            edge_child,
            piece,
        }
    }

    /// The node reached from `node` over `byte`, if any.
    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        let run =
            self.first_edge[node as usize] as usize..self.first_edge[node as usize + 1] as usize;
        let labels = &self.edge_byte[run.clone()];
        labels
            .binary_search(&byte)
            .ok()
            .map(|i| self.edge_child[run.start + i])
    }

    /// The longest piece that `text` starts with: `(its length in bytes, its
    /// id)`. A piece is whole UTF-8 text, so when `text` is too the length
    /// falls on one of its char boundaries.
    pub(super) fn longest_prefix(&self, text: &[u8]) -> Option<(usize, u32)> {
        let mut node = 0;
        let mut best = None;
        for (i, &b) in text.iter().enumerate() {
            match self.child(node, b) {
                Some(next) => node = next,
                None => break,
            }
            let id = self.piece[node as usize];
            if id != NO_PIECE {
                best = Some((i + 1, id));
            }
        }
        best
    }

    /// The id of exactly `text`, if it is a piece.
    pub(super) fn get(&self, text: &str) -> Option<u32> {
        let mut node = 0;
        for &b in text.as_bytes() {
            node = self.child(node, b)?;
        }
        Some(self.piece[node as usize]).filter(|&id| id != NO_PIECE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn trie(pieces: &[(&str, u32)]) -> PieceTrie {
        PieceTrie::build(pieces.iter().copied())
    }

    #[test]
    fn the_longest_piece_wins_and_shorter_ones_are_still_found() {
        let t = trie(&[("un", 1), ("unaff", 2), ("unaffable", 3), ("a", 4)]);
        assert_eq!(t.longest_prefix(b"unaffable"), Some((9, 3)));
        assert_eq!(t.longest_prefix(b"unaffected"), Some((5, 2)));
        assert_eq!(t.longest_prefix(b"unable"), Some((2, 1)));
        assert_eq!(
            t.longest_prefix(b"u"),
            None,
            "a prefix of a piece is no piece"
        );
        assert_eq!(t.longest_prefix(b"zebra"), None);
        assert_eq!(t.longest_prefix(b""), None);
        assert_eq!(t.get("unaff"), Some(2));
        assert_eq!(t.get("unaf"), None);
        assert_eq!(t.get(""), None);
    }

    #[test]
    fn a_piece_given_twice_keeps_its_last_id() {
        let t = trie(&[("x", 1), ("y", 2), ("x", 3)]);
        assert_eq!(t.get("x"), Some(3));
        assert_eq!(t.get("y"), Some(2));
    }

    /// Against the obvious search over a map (the one this trie replaced),
    /// on pieces and texts that share prefixes, with multi-byte chars.
    #[test]
    fn agrees_with_trying_every_length_against_a_map() {
        let alphabet = ["a", "b", "é", "ab", "ß", "中"];
        let mut seed = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut word = |n: u64| -> String {
            (0..1 + next() % n)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect()
        };
        let pieces: Vec<(String, u32)> = (0..300).map(|i| (word(5), i)).collect();
        let texts: Vec<String> = (0..2000).map(|_| word(8)).collect();
        let t = PieceTrie::build(pieces.iter().map(|(p, id)| (p.as_str(), *id)));
        let map: HashMap<&str, u32> = pieces.iter().map(|(p, id)| (p.as_str(), *id)).collect();
        for text in &texts {
            let expected = (1..=text.len())
                .rev()
                .filter(|&end| text.is_char_boundary(end))
                .find_map(|end| map.get(&text[..end]).map(|&id| (end, id)));
            assert_eq!(t.longest_prefix(text.as_bytes()), expected, "{text:?}");
            assert_eq!(t.get(text), map.get(text.as_str()).copied(), "{text:?}");
        }
    }
}

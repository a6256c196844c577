//! Sealing the facade's records at rest: encrypt-then-MAC under the
//! operator's state key (`ALAYASIKI_OAUTH_STATE_KEY`).
//!
//! No cipher crate is on the design card, so the construction is built
//! from SHA-256 alone, as HMAC-SHA256 (RFC 2104) in two roles with keys
//! derived apart from the state key:
//! - confidentiality: a keystream of HMAC(enc_key, nonce ‖ counter)
//!   blocks XORed with the plaintext (a PRF in counter mode, with a fresh
//!   random 128-bit nonce per record);
//! - integrity: HMAC(mac_key, aad ‖ nonce ‖ ciphertext), the full 32-byte
//!   tag, checked in constant time before anything is decrypted.
//!
//! The associated data binds a sealed value to the row it was written in
//! (its kind and key), so a value cannot be moved to another row. A record
//! sealed under another key fails its tag and reads as absent: a changed
//! key forgets registrations and grants, it never crashes the server.

use sha2::{Digest, Sha256};

/// Bytes of the random nonce in front of each sealed value.
const NONCE_BYTES: usize = 16;
/// Bytes of the tag behind it.
const TAG_BYTES: usize = 32;
/// SHA-256's block size, which HMAC pads keys to.
const BLOCK: usize = 64;

/// Shortest state key accepted (bytes): 256 bits.
pub const MIN_STATE_KEY_BYTES: usize = 32;

/// HMAC-SHA256 of the concatenation of `parts` under `key`.
pub fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Whether two byte strings are equal, in time that depends on their
/// lengths only.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// The two keys derived from the operator's state key.
pub struct Sealer {
    enc: [u8; 32],
    mac: [u8; 32],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

impl Sealer {
    /// Derives the sealing keys from `state_key` (at least
    /// [`MIN_STATE_KEY_BYTES`]).
    pub fn new(state_key: &[u8]) -> Result<Sealer, String> {
        if state_key.len() < MIN_STATE_KEY_BYTES {
            return Err(format!(
                "the state key is {} bytes; at least {MIN_STATE_KEY_BYTES} are required",
                state_key.len()
            ));
        }
        Ok(Sealer {
            enc: hmac(state_key, &[b"alayasiki oauth records: encryption"]),
            mac: hmac(state_key, &[b"alayasiki oauth records: integrity"]),
        })
    }

    /// `plaintext` sealed, bound to `aad`: nonce ‖ ciphertext ‖ tag.
    pub fn seal(&self, aad: &[u8], plaintext: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut nonce = [0u8; NONCE_BYTES];
        crate::ids::secret_bytes(&mut nonce)?;
        let mut out = Vec::with_capacity(NONCE_BYTES + plaintext.len() + TAG_BYTES);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(plaintext);
        self.keystream(&nonce, &mut out[NONCE_BYTES..]);
        let tag = self.tag(aad, &out);
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// The plaintext of `sealed`, if it was sealed by this key for `aad`.
    pub fn open(&self, aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < NONCE_BYTES + TAG_BYTES {
            return None;
        }
        let (body, tag) = sealed.split_at(sealed.len() - TAG_BYTES);
        if !constant_time_eq(&self.tag(aad, body), tag) {
            return None;
        }
        let (nonce, ciphertext) = body.split_at(NONCE_BYTES);
        let mut plain = ciphertext.to_vec();
        self.keystream(nonce, &mut plain);
        Some(plain)
    }

    fn tag(&self, aad: &[u8], body: &[u8]) -> [u8; 32] {
        // The length prefix keeps (aad, body) pairs from colliding.
        let len = (aad.len() as u64).to_be_bytes();
        hmac(&self.mac, &[&len, aad, body])
    }

    fn keystream(&self, nonce: &[u8], data: &mut [u8]) {
        for (counter, chunk) in data.chunks_mut(32).enumerate() {
            let block = hmac(&self.enc, &[nonce, &(counter as u64).to_be_bytes()]);
            for (d, k) in chunk.iter_mut().zip(block) {
                *d ^= k;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2: a short key.
        assert_eq!(
            hex(&hmac(b"Jefe", &[b"what do ya want ", b"for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex(&hmac(
                &[0xaa; 131],
                &[b"Test Using Larger Than Block-Size Key - Hash Key First"]
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn sealed_values_open_only_with_their_key_and_row() {
        let sealer = Sealer::new(&[7u8; 32]).unwrap();
        let text = b"a refresh token's grant, longer than one keystream block of 32 bytes";
        let sealed = sealer.seal(b"refresh/abc", text).unwrap();
        assert!(!sealed.windows(8).any(|w| w == &text[..8]), "not in clear");
        assert_eq!(sealer.open(b"refresh/abc", &sealed).unwrap(), text);
        assert!(sealer.open(b"refresh/abd", &sealed).is_none(), "other row");
        let other = Sealer::new(&[8u8; 32]).unwrap();
        assert!(other.open(b"refresh/abc", &sealed).is_none(), "other key");
        let mut flipped = sealed.clone();
        flipped[NONCE_BYTES + 3] ^= 1;
        assert!(sealer.open(b"refresh/abc", &flipped).is_none(), "tampered");
        assert!(sealer.open(b"refresh/abc", &sealed[..40]).is_none());
        assert_ne!(
            sealer.seal(b"x", text).unwrap(),
            sealer.seal(b"x", text).unwrap()
        );
        assert!(Sealer::new(&[1u8; 31]).is_err());
    }
}

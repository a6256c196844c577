//! The per-start secret of the loopback memory browser
//! ([`super::loopback_ui`]): the one bearer token its listener accepts.
//!
//! 32 bytes from the operating system's random source, shown as hex. No
//! random-number crate is on the design card and the need is one read of
//! `/dev/urandom` at start-up. The secret is compared in constant time, so
//! the time a refusal takes says nothing about how much of a guess was
//! right, and it is never printed by `Debug`: it reaches the user only
//! through the URL the server writes once ([`super::loopback_ui`]).

/// Random bytes in a secret (256 bits).
pub const LOCAL_SECRET_BYTES: usize = 32;

/// A random per-start secret.
#[derive(Clone)]
pub struct LocalSecret {
    /// Lower-case hex of the random bytes: the token as the client sends it.
    hex: String,
}

impl LocalSecret {
    /// A fresh secret from the operating system's random source.
    pub fn generate() -> std::io::Result<LocalSecret> {
        let mut bytes = [0u8; LOCAL_SECRET_BYTES];
        random_bytes(&mut bytes)?;
        Ok(LocalSecret::from_bytes(&bytes))
    }

    fn from_bytes(bytes: &[u8]) -> LocalSecret {
        let hex = bytes.iter().map(|b| format!("{b:02x}")).collect();
        LocalSecret { hex }
    }

    /// The secret as hex, for the one URL that carries it.
    pub fn expose_hex(&self) -> &str {
        &self.hex
    }

    /// Whether `token` is this secret, in time that depends on the length
    /// of `token` only (every byte is compared, whatever differs first).
    pub fn matches(&self, token: &str) -> bool {
        let (want, got) = (self.hex.as_bytes(), token.as_bytes());
        if want.len() != got.len() {
            // The length is public (it is in the documentation).
            return false;
        }
        let diff = want.iter().zip(got).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        // Keeps the compiler from turning the fold into an early exit.
        std::hint::black_box(diff) == 0
    }
}

impl std::fmt::Debug for LocalSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocalSecret(..)")
    }
}

fn random_bytes(out: &mut [u8]) -> std::io::Result<()> {
    crate::ids::secret_bytes(out).map_err(|e| {
        if e.kind() == std::io::ErrorKind::Unsupported {
            std::io::Error::new(
                e.kind(),
                "the loopback memory browser needs /dev/urandom, which this platform lacks; \
                 run alayasiki-api instead",
            )
        } else {
            e
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_64_hex_digits_and_new_each_time() {
        let a = LocalSecret::generate().unwrap();
        let b = LocalSecret::generate().unwrap();
        assert_eq!(a.expose_hex().len(), 2 * LOCAL_SECRET_BYTES);
        assert!(a.expose_hex().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.expose_hex(), b.expose_hex());
    }

    #[test]
    fn only_the_exact_secret_matches() {
        let s = LocalSecret::from_bytes(&[0xab; LOCAL_SECRET_BYTES]);
        let hex = s.expose_hex().to_string();
        assert!(s.matches(&hex));
        assert!(!s.matches(&hex.to_uppercase()));
        assert!(!s.matches(&hex[1..]));
        assert!(!s.matches(&format!("{hex}0")));
        assert!(!s.matches(""));
        let mut wrong = hex.into_bytes();
        wrong[63] = b'0';
        assert!(!s.matches(std::str::from_utf8(&wrong).unwrap()));
    }

    #[test]
    fn debug_does_not_show_the_secret() {
        let s = LocalSecret::from_bytes(&[0xab; LOCAL_SECRET_BYTES]);
        assert!(!format!("{s:?}").contains("abab"));
    }
}

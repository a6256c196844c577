//! The public error type of PDF extraction and its user-facing messages.
//!
//! Messages are written for the person who tried to ingest the file: they say
//! what is wrong and, where there is one, what to do, without parser internals.

use std::fmt;

/// Why text could not be extracted from a PDF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PdfError {
    /// The document is encrypted (it has an `/Encrypt` entry); decryption is
    /// not supported, even for an empty user password.
    Encrypted,
    /// The document was read but has no extractable text, typically because
    /// its pages are scanned images.
    NoText,
    /// The file is not a PDF or is too damaged to read; the message is short.
    Malformed(String),
    /// The document exceeds one of the resource limits.
    TooLarge(Limit),
}

/// Which resource limit was exceeded, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub kind: LimitKind,
    pub max: usize,
}

/// The resource limits of [`super::Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// The file itself is larger than allowed.
    InputBytes,
    /// One stream decompresses to more than allowed.
    StreamBytes,
    /// All streams together decompress to more than allowed.
    DecodedBytes,
    /// One page's content streams together are longer than allowed.
    PageContentBytes,
    /// The document declares more objects than allowed.
    Objects,
    /// The document has more pages than allowed.
    Pages,
    /// The extracted text is longer than allowed.
    TextBytes,
    /// Drawing the pages takes more work than allowed.
    Work,
}

impl fmt::Display for PdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PdfError::Encrypted => f.write_str(
                "the PDF is encrypted; save an unprotected copy and ingest that instead",
            ),
            PdfError::NoText => f.write_str(
                "the PDF contains no extractable text (it may be scanned images; run OCR on it first)",
            ),
            PdfError::Malformed(why) => write!(f, "the PDF could not be read: {why}"),
            PdfError::TooLarge(limit) => write!(f, "the PDF is too large to process: {limit}"),
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = self.max;
        match self.kind {
            LimitKind::InputBytes => write!(f, "the file is larger than {}", Bytes(max)),
            LimitKind::StreamBytes => {
                write!(f, "a stream decompresses to more than {}", Bytes(max))
            }
            LimitKind::DecodedBytes => {
                write!(
                    f,
                    "its streams decompress to more than {} in total",
                    Bytes(max)
                )
            }
            LimitKind::PageContentBytes => {
                write!(f, "a page's content is longer than {}", Bytes(max))
            }
            LimitKind::Objects => write!(f, "it has more than {max} objects"),
            LimitKind::Pages => write!(f, "it has more than {max} pages"),
            LimitKind::TextBytes => write!(f, "its text is longer than {}", Bytes(max)),
            LimitKind::Work => write!(
                f,
                "drawing its pages means interpreting more than {} of content",
                Bytes(max)
            ),
        }
    }
}

impl std::error::Error for PdfError {}

/// Formats a byte count the way a user reads it.
struct Bytes(usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: usize = 1 << 20;
        const KIB: usize = 1 << 10;
        match self.0 {
            n if n >= MIB && n % MIB == 0 => write!(f, "{} MiB", n / MIB),
            n if n >= KIB && n % KIB == 0 => write!(f, "{} KiB", n / KIB),
            n => write!(f, "{n} bytes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_short_and_specific() {
        assert!(PdfError::Encrypted.to_string().contains("encrypted"));
        assert!(PdfError::NoText.to_string().contains("scanned"));
        assert_eq!(
            PdfError::Malformed("no page tree".into()).to_string(),
            "the PDF could not be read: no page tree"
        );
        let e = PdfError::TooLarge(Limit {
            kind: LimitKind::InputBytes,
            max: 256 << 20,
        });
        assert_eq!(
            e.to_string(),
            "the PDF is too large to process: the file is larger than 256 MiB"
        );
        let e = PdfError::TooLarge(Limit {
            kind: LimitKind::Pages,
            max: 7,
        });
        assert!(e.to_string().ends_with("more than 7 pages"));
        assert_eq!(Bytes(1500).to_string(), "1500 bytes");
        assert_eq!(Bytes(2048).to_string(), "2 KiB");
    }
}

//! Media types the memory accepts, and how an upload's type is decided:
//! the declared `mime_type` first, else the magic number at the start of
//! the bytes (PDF, images, audio), else the filename's extension, else a
//! look at the bytes as text (JSON or plain UTF-8).
//!
//! Magic numbers come before the extension because they cannot lie about
//! binary formats (a `notes.txt` that starts with `%PDF-` is a PDF), while
//! text formats have no magic number and are told apart by extension.
//! Every magic check below requires at least one byte that valid UTF-8 text
//! would not contain, or a signature no prose starts with, so a text file is
//! never mistaken for media.

/// Kinds of content the extractor understands. Images and audio carry
/// their canonical media type (one of `IMAGE_KNOWN` / `AUDIO_KNOWN`);
/// their text comes from metadata hints, not from the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    PlainText,
    Markdown,
    Json,
    Pdf,
    Image(&'static str),
    Audio(&'static str),
}

impl MediaKind {
    /// The canonical media type stored with the document.
    pub fn media_type(self) -> &'static str {
        match self {
            MediaKind::PlainText => "text/plain",
            MediaKind::Markdown => "text/markdown",
            MediaKind::Json => "application/json",
            MediaKind::Pdf => "application/pdf",
            MediaKind::Image(t) | MediaKind::Audio(t) => t,
        }
    }

    /// True for kinds whose original bytes are UTF-8 text (returned as
    /// `text` rather than base64 when the original is read back).
    pub fn is_text(self) -> bool {
        matches!(
            self,
            MediaKind::PlainText | MediaKind::Markdown | MediaKind::Json
        )
    }

    /// True for kinds described by metadata hints rather than extracted.
    pub fn is_described(self) -> bool {
        matches!(self, MediaKind::Image(_) | MediaKind::Audio(_))
    }
}

/// A media type the memory accepts: its canonical name, other names it
/// goes by, and the filename extensions that imply it.
struct Known {
    canonical: &'static str,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
}

const DOCUMENT_KNOWN: &[Known] = &[
    Known {
        canonical: "text/plain",
        aliases: &[],
        extensions: &["txt", "text", "log"],
    },
    Known {
        canonical: "text/markdown",
        aliases: &["text/x-markdown"],
        extensions: &["md", "markdown"],
    },
    Known {
        canonical: "application/json",
        aliases: &["text/json"],
        extensions: &["json"],
    },
    Known {
        canonical: "application/pdf",
        aliases: &["application/x-pdf"],
        extensions: &["pdf"],
    },
];

/// Image types accepted (described by metadata hints).
const IMAGE_KNOWN: &[Known] = &[
    Known {
        canonical: "image/png",
        aliases: &[],
        extensions: &["png"],
    },
    Known {
        canonical: "image/jpeg",
        aliases: &["image/jpg", "image/pjpeg"],
        extensions: &["jpg", "jpeg", "jpe"],
    },
    Known {
        canonical: "image/gif",
        aliases: &[],
        extensions: &["gif"],
    },
    Known {
        canonical: "image/webp",
        aliases: &[],
        extensions: &["webp"],
    },
    Known {
        canonical: "image/tiff",
        aliases: &[],
        extensions: &["tif", "tiff"],
    },
    Known {
        canonical: "image/bmp",
        aliases: &["image/x-bmp", "image/x-ms-bmp"],
        extensions: &["bmp"],
    },
    Known {
        canonical: "image/heic",
        aliases: &["image/heif"],
        extensions: &["heic", "heif"],
    },
    Known {
        canonical: "image/avif",
        aliases: &[],
        extensions: &["avif"],
    },
];

/// Audio types accepted (described by metadata hints).
const AUDIO_KNOWN: &[Known] = &[
    Known {
        canonical: "audio/wav",
        aliases: &["audio/wave", "audio/x-wav", "audio/vnd.wave"],
        extensions: &["wav"],
    },
    Known {
        canonical: "audio/mpeg",
        aliases: &["audio/mp3", "audio/mpeg3", "audio/x-mpeg"],
        extensions: &["mp3"],
    },
    Known {
        canonical: "audio/ogg",
        aliases: &["audio/opus", "audio/vorbis", "application/ogg"],
        extensions: &["ogg", "oga", "opus"],
    },
    Known {
        canonical: "audio/flac",
        aliases: &["audio/x-flac"],
        extensions: &["flac"],
    },
    Known {
        canonical: "audio/mp4",
        aliases: &["audio/m4a", "audio/x-m4a"],
        extensions: &["m4a"],
    },
    Known {
        canonical: "audio/aac",
        aliases: &["audio/x-aac"],
        extensions: &["aac"],
    },
];

/// Canonical types, for error messages and documentation.
pub const SUPPORTED_MEDIA_TYPES: &[&str] = &[
    "text/plain",
    "text/markdown",
    "application/json",
    "application/pdf",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/tiff",
    "image/bmp",
    "image/heic",
    "image/avif",
    "audio/wav",
    "audio/mpeg",
    "audio/ogg",
    "audio/flac",
    "audio/mp4",
    "audio/aac",
];

/// Types `content` given inline as a string may have (the rest are files).
pub const TEXT_MEDIA_TYPES: &[&str] = &["text/plain", "text/markdown", "application/json"];

fn kind_of(canonical: &'static str) -> MediaKind {
    match canonical {
        "text/plain" => MediaKind::PlainText,
        "text/markdown" => MediaKind::Markdown,
        "application/json" => MediaKind::Json,
        "application/pdf" => MediaKind::Pdf,
        t if t.starts_with("image/") => MediaKind::Image(t),
        t => MediaKind::Audio(t),
    }
}

fn all_known() -> impl Iterator<Item = &'static Known> {
    DOCUMENT_KNOWN.iter().chain(IMAGE_KNOWN).chain(AUDIO_KNOWN)
}

/// Maps a declared media type (parameters such as `; charset=utf-8` are
/// ignored; UTF-8 is required regardless) to a kind.
pub fn from_media_type(declared: &str) -> Option<MediaKind> {
    let essence = declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    all_known()
        .find(|k| k.canonical == essence || k.aliases.contains(&essence.as_str()))
        .map(|k| kind_of(k.canonical))
}

/// Maps a filename's extension to a kind.
pub fn from_filename(name: &str) -> Option<MediaKind> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    all_known()
        .find(|k| k.extensions.contains(&ext.as_str()))
        .map(|k| kind_of(k.canonical))
}

/// Recognizes binary formats by their magic number.
pub fn sniff_magic(bytes: &[u8]) -> Option<MediaKind> {
    let at = |offset: usize, magic: &[u8]| bytes.get(offset..offset + magic.len()) == Some(magic);
    let kind = if at(0, b"%PDF-") {
        MediaKind::Pdf
    } else if at(0, b"\x89PNG\r\n\x1a\n") {
        MediaKind::Image("image/png")
    } else if at(0, b"\xff\xd8\xff") {
        MediaKind::Image("image/jpeg")
    } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
        MediaKind::Image("image/gif")
    } else if at(0, b"RIFF") && at(8, b"WEBP") {
        MediaKind::Image("image/webp")
    } else if at(0, b"RIFF") && at(8, b"WAVE") {
        MediaKind::Audio("audio/wav")
    } else if at(0, b"II*\x00") || at(0, b"MM\x00*") {
        MediaKind::Image("image/tiff")
    } else if at(4, b"ftyp") {
        // ISO base media file: the major brand says what it holds.
        match bytes.get(8..12)? {
            b"avif" | b"avis" => MediaKind::Image("image/avif"),
            b"heic" | b"heix" | b"heim" | b"heis" | b"mif1" | b"msf1" => {
                MediaKind::Image("image/heic")
            }
            b"M4A " | b"M4B " => MediaKind::Audio("audio/mp4"),
            _ => return None,
        }
    } else if at(0, b"ID3") && bytes.get(3).is_some_and(|v| (2..=4).contains(v)) {
        // ID3v2 tag in front of MPEG audio; the version byte is binary.
        MediaKind::Audio("audio/mpeg")
    } else if at(0, b"OggS\x00") {
        MediaKind::Audio("audio/ogg")
    } else if at(0, b"fLaC") && bytes.get(4).is_some_and(|b| b & 0x7f == 0) {
        // The first metadata block is STREAMINFO (type 0).
        MediaKind::Audio("audio/flac")
    } else if bytes.len() >= 2 && bytes[0] == 0xff && bytes[1] & 0xe0 == 0xe0 {
        // An MPEG audio frame sync (11 set bits). Layer bits 00 are ADTS
        // AAC; anything else is MPEG audio (MP3 without an ID3 tag).
        if bytes[1] & 0x06 == 0 {
            MediaKind::Audio("audio/aac")
        } else {
            MediaKind::Audio("audio/mpeg")
        }
    } else {
        return None;
    };
    Some(kind)
}

/// Guesses from the bytes as text: JSON if it parses as a JSON object or
/// array, plain text if it is UTF-8 without NUL bytes, otherwise unknown.
pub fn sniff(bytes: &[u8]) -> Option<MediaKind> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.contains('\0') {
        return None;
    }
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde_json::Value>(text).is_ok()
    {
        return Some(MediaKind::Json);
    }
    Some(MediaKind::PlainText)
}

/// Decides an undeclared file's kind: magic number, else extension, else
/// the bytes as text.
pub fn detect(filename: Option<&str>, bytes: &[u8]) -> Option<MediaKind> {
    sniff_magic(bytes)
        .or_else(|| filename.and_then(from_filename))
        .or_else(|| sniff(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_type_ignores_parameters_and_case() {
        assert_eq!(
            from_media_type("Text/Markdown; charset=utf-8"),
            Some(MediaKind::Markdown)
        );
        assert_eq!(from_media_type("application/pdf"), Some(MediaKind::Pdf));
        assert_eq!(
            from_media_type("audio/x-wav"),
            Some(MediaKind::Audio("audio/wav"))
        );
        assert_eq!(
            from_media_type("IMAGE/JPG"),
            Some(MediaKind::Image("image/jpeg"))
        );
        assert_eq!(from_media_type("application/zip"), None);
        assert_eq!(from_media_type("image/x-unknown"), None);
    }

    #[test]
    fn every_supported_type_is_known_and_canonical() {
        for t in SUPPORTED_MEDIA_TYPES {
            assert_eq!(from_media_type(t).map(MediaKind::media_type), Some(*t));
        }
        assert_eq!(all_known().count(), SUPPORTED_MEDIA_TYPES.len());
    }

    #[test]
    fn sniffing_tells_json_from_text_from_binary() {
        assert_eq!(sniff(br#"{"a": 1}"#), Some(MediaKind::Json));
        assert_eq!(sniff(b"{not json"), Some(MediaKind::PlainText));
        assert_eq!(sniff(&[0xff, 0xfe, 0x00]), None);
    }

    #[test]
    fn magic_numbers_name_each_binary_format() {
        let cases: &[(&[u8], &str)] = &[
            (b"%PDF-1.7\n", "application/pdf"),
            (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "image/png"),
            (b"\xff\xd8\xff\xe0\0\x10JFIF", "image/jpeg"),
            (b"GIF89a\x01\0", "image/gif"),
            (b"RIFF\x24\0\0\0WEBPVP8 ", "image/webp"),
            (b"RIFF\x24\0\0\0WAVEfmt ", "audio/wav"),
            (b"II*\0\x08\0\0\0", "image/tiff"),
            (b"\0\0\0\x1cftypavif", "image/avif"),
            (b"\0\0\0\x18ftypheic", "image/heic"),
            (b"\0\0\0\x20ftypM4A ", "audio/mp4"),
            (b"ID3\x04\0\0\0\0\0\0", "audio/mpeg"),
            (b"\xff\xfb\x90\x64", "audio/mpeg"),
            (b"\xff\xf1\x50\x80", "audio/aac"),
            (b"OggS\0\x02\0\0", "audio/ogg"),
            (b"fLaC\0\0\0\x22", "audio/flac"),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                sniff_magic(bytes).map(MediaKind::media_type),
                Some(*want),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn prose_is_never_mistaken_for_media() {
        for text in [
            "ID3 tags describe MP3 files.",
            "fLaC is a format",
            "OggS",
            "GIF",
            "RIFF raff",
            "MM, not sure",
            "BM",
            "",
        ] {
            assert_eq!(sniff_magic(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn detection_order_is_magic_then_extension_then_text() {
        assert_eq!(
            detect(Some("notes.txt"), b"%PDF-1.4 ..."),
            Some(MediaKind::Pdf)
        );
        assert_eq!(detect(Some("a.md"), b"# Title"), Some(MediaKind::Markdown));
        assert_eq!(detect(Some("a.bin"), b"plain"), Some(MediaKind::PlainText));
        assert_eq!(
            detect(Some("photo.jpg"), b"\0\0\0"),
            Some(MediaKind::Image("image/jpeg"))
        );
        assert_eq!(detect(None, &[0, 159, 146, 150]), None);
    }
}

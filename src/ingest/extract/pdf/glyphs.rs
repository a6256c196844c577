//! Glyph names to Unicode, for fonts whose `/Encoding` `/Differences` name
//! their glyphs.
//!
//! Covers the names of the Latin, Greek and symbol glyphs that occur in
//! practice (the Adobe Glyph List names for ASCII, Latin-1, Latin Extended-A,
//! basic Greek, common punctuation and math), the Cyrillic `afii100xx`
//! names, and the algorithmic forms `uniXXXX`, `uXXXX[XX]`, `name.suffix`
//! and `a_b` ligatures. Ligature glyphs map to their letters ("fi" -> "fi"),
//! which is what a search index wants. The table was generated from the
//! Unicode character names of the letters concerned.

/// The text of glyph `name`, if known.
pub(super) fn glyph_text(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    glyph_text_str(name, 0)
}

fn glyph_text_str(name: &str, depth: usize) -> Option<String> {
    if let Ok(i) = GLYPHS.binary_search_by(|(n, _)| n.cmp(&name)) {
        return Some(GLYPHS[i].1.to_string());
    }
    if let Some(hex) = name.strip_prefix("uni") {
        return uni_sequence(hex);
    }
    if let Some(hex) = name.strip_prefix('u') {
        if (4..=6).contains(&hex.len()) {
            return hex_char(hex).map(String::from);
        }
    }
    if let Some(c) = name.strip_prefix("afii").and_then(cyrillic) {
        return Some(c.to_string());
    }
    // "a.sc", "one.oldstyle": the part before the first period names it.
    if depth == 0 {
        if let Some((base, _)) = name.split_once('.') {
            if !base.is_empty() {
                return glyph_text_str(base, 1);
            }
        }
        // "f_f_i": a ligature of its components.
        if name.contains('_') {
            return name
                .split('_')
                .map(|part| glyph_text_str(part, 1))
                .collect();
        }
    }
    None
}

/// "uniXXXXYYYY...": one or more groups of four hex digits.
fn uni_sequence(hex: &str) -> Option<String> {
    if hex.is_empty() || !hex.len().is_multiple_of(4) || !hex.is_ascii() {
        return None;
    }
    (0..hex.len())
        .step_by(4)
        .map(|i| hex_char(&hex[i..i + 4]))
        .collect()
}

fn hex_char(hex: &str) -> Option<char> {
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    char::from_u32(u32::from_str_radix(hex, 16).ok()?)
}

/// Adobe's names for Cyrillic: afii10017..10049 are А..Я (with Ё at 10023)
/// and afii10065..10097 are а..я (with ё at 10071).
fn cyrillic(number: &str) -> Option<char> {
    let n: u32 = number.parse().ok()?;
    let code = match n {
        10023 => 0x401,
        10071 => 0x451,
        10017..=10022 => 0x410 + (n - 10017),
        10024..=10049 => 0x416 + (n - 10024),
        10065..=10070 => 0x430 + (n - 10065),
        10072..=10097 => 0x436 + (n - 10072),
        _ => return None,
    };
    char::from_u32(code)
}

/// Glyph names and their text, sorted by name (byte order) for binary search.
#[rustfmt::skip]
static GLYPHS: &[(&str, &str)] = &[
    ("A", "A"), ("AE", "\u{c6}"), ("Aacute", "\u{c1}"), ("Abreve", "\u{102}"),
    ("Acircumflex", "\u{c2}"), ("Adieresis", "\u{c4}"), ("Agrave", "\u{c0}"),
    ("Alpha", "\u{391}"), ("Alphatonos", "\u{386}"), ("Amacron", "\u{100}"),
    ("Aogonek", "\u{104}"), ("Aring", "\u{c5}"), ("Atilde", "\u{c3}"), ("B", "B"),
    ("Beta", "\u{392}"), ("C", "C"), ("Cacute", "\u{106}"), ("Ccaron", "\u{10c}"),
    ("Ccedilla", "\u{c7}"), ("Ccircumflex", "\u{108}"), ("Cdotaccent", "\u{10a}"),
    ("Chi", "\u{3a7}"), ("D", "D"), ("Dcaron", "\u{10e}"), ("Dcroat", "\u{110}"),
    ("Delta", "\u{394}"), ("E", "E"), ("Eacute", "\u{c9}"), ("Ebreve", "\u{114}"),
    ("Ecaron", "\u{11a}"), ("Ecircumflex", "\u{ca}"), ("Edieresis", "\u{cb}"),
    ("Edotaccent", "\u{116}"), ("Egrave", "\u{c8}"), ("Emacron", "\u{112}"), ("Eng", "\u{14a}"),
    ("Eogonek", "\u{118}"), ("Epsilon", "\u{395}"), ("Epsilontonos", "\u{388}"),
    ("Eta", "\u{397}"), ("Etatonos", "\u{389}"), ("Eth", "\u{d0}"), ("Euro", "\u{20ac}"),
    ("F", "F"), ("G", "G"), ("Gamma", "\u{393}"), ("Gbreve", "\u{11e}"),
    ("Gcedilla", "\u{122}"), ("Gcircumflex", "\u{11c}"), ("Gcommaaccent", "\u{122}"),
    ("Gdotaccent", "\u{120}"), ("H", "H"), ("H18533", "\u{25cf}"), ("H22073", "\u{25a1}"),
    ("Hbar", "\u{126}"), ("Hcircumflex", "\u{124}"), ("I", "I"), ("IJ", "\u{132}"),
    ("Iacute", "\u{cd}"), ("Ibreve", "\u{12c}"), ("Icircumflex", "\u{ce}"),
    ("Idieresis", "\u{cf}"), ("Idot", "\u{130}"), ("Idotaccent", "\u{130}"),
    ("Ifraktur", "\u{2111}"), ("Igrave", "\u{cc}"), ("Imacron", "\u{12a}"),
    ("Iogonek", "\u{12e}"), ("Iota", "\u{399}"), ("Iotadieresis", "\u{3aa}"),
    ("Iotatonos", "\u{38a}"), ("Itilde", "\u{128}"), ("J", "J"), ("Jcircumflex", "\u{134}"),
    ("K", "K"), ("Kappa", "\u{39a}"), ("Kcedilla", "\u{136}"), ("Kcommaaccent", "\u{136}"),
    ("L", "L"), ("Lacute", "\u{139}"), ("Lambda", "\u{39b}"), ("Lcaron", "\u{13d}"),
    ("Lcedilla", "\u{13b}"), ("Lcommaaccent", "\u{13b}"), ("Ldot", "\u{13f}"),
    ("Lslash", "\u{141}"), ("M", "M"), ("Mu", "\u{39c}"), ("N", "N"), ("Nacute", "\u{143}"),
    ("Ncaron", "\u{147}"), ("Ncedilla", "\u{145}"), ("Ncommaaccent", "\u{145}"),
    ("Ntilde", "\u{d1}"), ("Nu", "\u{39d}"), ("O", "O"), ("OE", "\u{152}"),
    ("Oacute", "\u{d3}"), ("Obreve", "\u{14e}"), ("Ocircumflex", "\u{d4}"),
    ("Odieresis", "\u{d6}"), ("Ograve", "\u{d2}"), ("Ohorn", "\u{1a0}"),
    ("Ohungarumlaut", "\u{150}"), ("Omacron", "\u{14c}"), ("Omega", "\u{3a9}"),
    ("Omegatonos", "\u{38f}"), ("Omicron", "\u{39f}"), ("Omicrontonos", "\u{38c}"),
    ("Oslash", "\u{d8}"), ("Otilde", "\u{d5}"), ("P", "P"), ("Phi", "\u{3a6}"),
    ("Pi", "\u{3a0}"), ("Psi", "\u{3a8}"), ("Q", "Q"), ("R", "R"), ("Racute", "\u{154}"),
    ("Rcaron", "\u{158}"), ("Rcedilla", "\u{156}"), ("Rcommaaccent", "\u{156}"),
    ("Rfraktur", "\u{211c}"), ("Rho", "\u{3a1}"), ("S", "S"), ("SF100000", "\u{2500}"),
    ("SF110000", "\u{2502}"), ("Sacute", "\u{15a}"), ("Scaron", "\u{160}"),
    ("Scedilla", "\u{15e}"), ("Schwa", "\u{18f}"), ("Scircumflex", "\u{15c}"),
    ("Scommaaccent", "\u{218}"), ("Sigma", "\u{3a3}"), ("T", "T"), ("Tau", "\u{3a4}"),
    ("Tbar", "\u{166}"), ("Tcaron", "\u{164}"), ("Tcedilla", "\u{162}"),
    ("Tcommaaccent", "\u{162}"), ("Theta", "\u{398}"), ("Thorn", "\u{de}"), ("U", "U"),
    ("Uacute", "\u{da}"), ("Ubreve", "\u{16c}"), ("Ucircumflex", "\u{db}"),
    ("Udieresis", "\u{dc}"), ("Ugrave", "\u{d9}"), ("Uhorn", "\u{1af}"),
    ("Uhungarumlaut", "\u{170}"), ("Umacron", "\u{16a}"), ("Uogonek", "\u{172}"),
    ("Upsilon", "\u{3a5}"), ("Upsilon1", "\u{3d2}"), ("Upsilondieresis", "\u{3ab}"),
    ("Upsilontonos", "\u{38e}"), ("Uring", "\u{16e}"), ("Utilde", "\u{168}"), ("V", "V"),
    ("W", "W"), ("Wcircumflex", "\u{174}"), ("X", "X"), ("Xi", "\u{39e}"), ("Y", "Y"),
    ("Yacute", "\u{dd}"), ("Ycircumflex", "\u{176}"), ("Ydieresis", "\u{178}"), ("Z", "Z"),
    ("Zacute", "\u{179}"), ("Zcaron", "\u{17d}"), ("Zdotaccent", "\u{17b}"),
    ("Zeta", "\u{396}"), ("a", "a"), ("aacute", "\u{e1}"), ("abreve", "\u{103}"),
    ("acircumflex", "\u{e2}"), ("acute", "\u{b4}"), ("adieresis", "\u{e4}"), ("ae", "\u{e6}"),
    ("afii61289", "\u{2113}"), ("afii61352", "\u{2116}"), ("agrave", "\u{e0}"),
    ("aleph", "\u{2135}"), ("alpha", "\u{3b1}"), ("alphatonos", "\u{3ac}"),
    ("amacron", "\u{101}"), ("ampersand", "&"), ("angle", "\u{2220}"),
    ("angleleft", "\u{2329}"), ("angleright", "\u{232a}"), ("anoteleia", "\u{387}"),
    ("aogonek", "\u{105}"), ("approxequal", "\u{2248}"), ("aring", "\u{e5}"),
    ("arrowboth", "\u{2194}"), ("arrowdblboth", "\u{21d4}"), ("arrowdblleft", "\u{21d0}"),
    ("arrowdblright", "\u{21d2}"), ("arrowdown", "\u{2193}"), ("arrowleft", "\u{2190}"),
    ("arrowright", "\u{2192}"), ("arrowup", "\u{2191}"), ("asciicircum", "^"),
    ("asciitilde", "~"), ("asterisk", "*"), ("asteriskmath", "\u{2217}"), ("at", "@"),
    ("atilde", "\u{e3}"), ("b", "b"), ("backslash", "\\"), ("bar", "|"), ("beta", "\u{3b2}"),
    ("blackstar", "\u{2605}"), ("block", "\u{2588}"), ("braceleft", "{"), ("braceright", "}"),
    ("bracketleft", "["), ("bracketright", "]"), ("breve", "\u{2d8}"), ("brokenbar", "\u{a6}"),
    ("bullet", "\u{2022}"), ("c", "c"), ("cacute", "\u{107}"), ("caron", "\u{2c7}"),
    ("ccaron", "\u{10d}"), ("ccedilla", "\u{e7}"), ("ccircumflex", "\u{109}"),
    ("cdotaccent", "\u{10b}"), ("cedilla", "\u{b8}"), ("cent", "\u{a2}"),
    ("checkmark", "\u{2713}"), ("chi", "\u{3c7}"), ("circle", "\u{25cb}"),
    ("circlemultiply", "\u{2297}"), ("circleplus", "\u{2295}"), ("circumflex", "\u{2c6}"),
    ("club", "\u{2663}"), ("colon", ":"), ("colonmonetary", "\u{20a1}"), ("comma", ","),
    ("commaaccent", "\u{326}"), ("congruent", "\u{2245}"), ("copyright", "\u{a9}"),
    ("copyrightsans", "\u{a9}"), ("copyrightserif", "\u{a9}"), ("currency", "\u{a4}"),
    ("d", "d"), ("dagger", "\u{2020}"), ("daggerdbl", "\u{2021}"), ("dcaron", "\u{10f}"),
    ("dcroat", "\u{111}"), ("degree", "\u{b0}"), ("delta", "\u{3b4}"), ("diamond", "\u{2666}"),
    ("dieresis", "\u{a8}"), ("dieresistonos", "\u{385}"), ("divide", "\u{f7}"),
    ("dkshade", "\u{2593}"), ("dnblock", "\u{2584}"), ("dollar", "$"), ("dong", "\u{20ab}"),
    ("dotaccent", "\u{2d9}"), ("dotlessi", "\u{131}"), ("dotlessj", "\u{237}"),
    ("dotmath", "\u{22c5}"), ("e", "e"), ("eacute", "\u{e9}"), ("ebreve", "\u{115}"),
    ("ecaron", "\u{11b}"), ("ecircumflex", "\u{ea}"), ("edieresis", "\u{eb}"),
    ("edotaccent", "\u{117}"), ("egrave", "\u{e8}"), ("eight", "8"),
    ("eightinferior", "\u{2088}"), ("eightsuperior", "\u{2078}"), ("element", "\u{2208}"),
    ("ellipsis", "\u{2026}"), ("emacron", "\u{113}"), ("emdash", "\u{2014}"),
    ("emptyset", "\u{2205}"), ("endash", "\u{2013}"), ("eng", "\u{14b}"),
    ("eogonek", "\u{119}"), ("epsilon", "\u{3b5}"), ("epsilontonos", "\u{3ad}"), ("equal", "="),
    ("equivalence", "\u{2261}"), ("estimated", "\u{212e}"), ("eta", "\u{3b7}"),
    ("etatonos", "\u{3ae}"), ("eth", "\u{f0}"), ("exclam", "!"), ("exclamdbl", "\u{203c}"),
    ("exclamdown", "\u{a1}"), ("existential", "\u{2203}"), ("f", "f"), ("female", "\u{2640}"),
    ("ff", "ff"), ("ffi", "ffi"), ("ffl", "ffl"), ("fi", "fi"), ("figuredash", "\u{2012}"),
    ("filledbox", "\u{25a0}"), ("five", "5"), ("fiveeighths", "\u{215d}"),
    ("fiveinferior", "\u{2085}"), ("fivesuperior", "\u{2075}"), ("fl", "fl"),
    ("florin", "\u{192}"), ("four", "4"), ("fourinferior", "\u{2084}"),
    ("foursuperior", "\u{2074}"), ("fraction", "\u{2044}"), ("franc", "\u{20a3}"), ("g", "g"),
    ("gamma", "\u{3b3}"), ("gbreve", "\u{11f}"), ("gcedilla", "\u{123}"),
    ("gcircumflex", "\u{11d}"), ("gcommaaccent", "\u{123}"), ("gdotaccent", "\u{121}"),
    ("germandbls", "\u{df}"), ("gradient", "\u{2207}"), ("grave", "`"), ("greater", ">"),
    ("greaterequal", "\u{2265}"), ("guillemotleft", "\u{ab}"), ("guillemotright", "\u{bb}"),
    ("guilsinglleft", "\u{2039}"), ("guilsinglright", "\u{203a}"), ("h", "h"),
    ("hbar", "\u{127}"), ("hcircumflex", "\u{125}"), ("heart", "\u{2665}"),
    ("house", "\u{2302}"), ("hungarumlaut", "\u{2dd}"), ("hyphen", "-"),
    ("hyphentwo", "\u{2010}"), ("i", "i"), ("iacute", "\u{ed}"), ("ibreve", "\u{12d}"),
    ("icircumflex", "\u{ee}"), ("idieresis", "\u{ef}"), ("igrave", "\u{ec}"), ("ij", "\u{133}"),
    ("imacron", "\u{12b}"), ("increment", "\u{2206}"), ("infinity", "\u{221e}"),
    ("integral", "\u{222b}"), ("integralbt", "\u{2321}"), ("integraltp", "\u{2320}"),
    ("intersection", "\u{2229}"), ("invbullet", "\u{25d8}"), ("invcircle", "\u{25d9}"),
    ("invsmileface", "\u{263b}"), ("iogonek", "\u{12f}"), ("iota", "\u{3b9}"),
    ("iotadieresis", "\u{3ca}"), ("iotadieresistonos", "\u{390}"), ("iotatonos", "\u{3af}"),
    ("itilde", "\u{129}"), ("j", "j"), ("jcircumflex", "\u{135}"), ("k", "k"),
    ("kappa", "\u{3ba}"), ("kcedilla", "\u{137}"), ("kcommaaccent", "\u{137}"),
    ("kgreenlandic", "\u{138}"), ("l", "l"), ("lacute", "\u{13a}"), ("lambda", "\u{3bb}"),
    ("lcaron", "\u{13e}"), ("lcedilla", "\u{13c}"), ("lcommaaccent", "\u{13c}"),
    ("ldot", "\u{140}"), ("less", "<"), ("lessequal", "\u{2264}"), ("lfblock", "\u{258c}"),
    ("lira", "\u{20a4}"), ("logicaland", "\u{2227}"), ("logicalnot", "\u{ac}"),
    ("logicalor", "\u{2228}"), ("longs", "\u{17f}"), ("lozenge", "\u{25ca}"),
    ("lslash", "\u{142}"), ("ltshade", "\u{2591}"), ("m", "m"), ("macron", "\u{af}"),
    ("male", "\u{2642}"), ("micro", "\u{b5}"), ("middot", "\u{b7}"), ("minus", "\u{2212}"),
    ("minute", "\u{2032}"), ("mu", "\u{b5}"), ("multiply", "\u{d7}"),
    ("musicalnote", "\u{266a}"), ("musicalnotedbl", "\u{266b}"), ("n", "n"),
    ("nacute", "\u{144}"), ("napostrophe", "\u{149}"), ("nbspace", "\u{a0}"),
    ("ncaron", "\u{148}"), ("ncedilla", "\u{146}"), ("ncommaaccent", "\u{146}"),
    ("newsheqel", "\u{20aa}"), ("nine", "9"), ("nineinferior", "\u{2089}"),
    ("ninesuperior", "\u{2079}"), ("nonbreakingspace", "\u{a0}"), ("notelement", "\u{2209}"),
    ("notequal", "\u{2260}"), ("ntilde", "\u{f1}"), ("nu", "\u{3bd}"), ("numbersign", "#"),
    ("numero", "\u{2116}"), ("o", "o"), ("oacute", "\u{f3}"), ("obreve", "\u{14f}"),
    ("ocircumflex", "\u{f4}"), ("odieresis", "\u{f6}"), ("oe", "\u{153}"),
    ("ogonek", "\u{2db}"), ("ograve", "\u{f2}"), ("ohm", "\u{2126}"), ("ohorn", "\u{1a1}"),
    ("ohungarumlaut", "\u{151}"), ("omacron", "\u{14d}"), ("omega", "\u{3c9}"),
    ("omega1", "\u{3d6}"), ("omegatonos", "\u{3ce}"), ("omicron", "\u{3bf}"),
    ("omicrontonos", "\u{3cc}"), ("one", "1"), ("onedotenleader", "\u{2024}"),
    ("oneeighth", "\u{215b}"), ("onehalf", "\u{bd}"), ("oneinferior", "\u{2081}"),
    ("onequarter", "\u{bc}"), ("onesuperior", "\u{b9}"), ("onethird", "\u{2153}"),
    ("openbullet", "\u{25e6}"), ("ordfeminine", "\u{aa}"), ("ordmasculine", "\u{ba}"),
    ("oslash", "\u{f8}"), ("otilde", "\u{f5}"), ("p", "p"), ("paragraph", "\u{b6}"),
    ("parenleft", "("), ("parenright", ")"), ("partialdiff", "\u{2202}"), ("percent", "%"),
    ("period", "."), ("periodcentered", "\u{b7}"), ("perpendicular", "\u{22a5}"),
    ("perthousand", "\u{2030}"), ("peseta", "\u{20a7}"), ("phi", "\u{3c6}"),
    ("phi1", "\u{3d5}"), ("pi", "\u{3c0}"), ("plus", "+"), ("plusminus", "\u{b1}"),
    ("product", "\u{220f}"), ("propersubset", "\u{2282}"), ("propersuperset", "\u{2283}"),
    ("proportional", "\u{221d}"), ("psi", "\u{3c8}"), ("q", "q"), ("question", "?"),
    ("questiondown", "\u{bf}"), ("quotedbl", "\""), ("quotedblbase", "\u{201e}"),
    ("quotedblleft", "\u{201c}"), ("quotedblright", "\u{201d}"), ("quoteleft", "\u{2018}"),
    ("quotereversed", "\u{201b}"), ("quoteright", "\u{2019}"), ("quotesinglbase", "\u{201a}"),
    ("quotesingle", "'"), ("r", "r"), ("racute", "\u{155}"), ("radical", "\u{221a}"),
    ("rcaron", "\u{159}"), ("rcedilla", "\u{157}"), ("rcommaaccent", "\u{157}"),
    ("reflexsubset", "\u{2286}"), ("reflexsuperset", "\u{2287}"), ("registered", "\u{ae}"),
    ("registersans", "\u{ae}"), ("registerserif", "\u{ae}"), ("revlogicalnot", "\u{2310}"),
    ("rho", "\u{3c1}"), ("ring", "\u{2da}"), ("rtblock", "\u{2590}"), ("s", "s"),
    ("sacute", "\u{15b}"), ("scaron", "\u{161}"), ("scedilla", "\u{15f}"), ("schwa", "\u{259}"),
    ("scircumflex", "\u{15d}"), ("scommaaccent", "\u{219}"), ("second", "\u{2033}"),
    ("section", "\u{a7}"), ("semicolon", ";"), ("seven", "7"), ("seveneighths", "\u{215e}"),
    ("seveninferior", "\u{2087}"), ("sevensuperior", "\u{2077}"), ("sfthyphen", "\u{ad}"),
    ("shade", "\u{2592}"), ("sigma", "\u{3c3}"), ("sigma1", "\u{3c2}"), ("similar", "\u{223c}"),
    ("six", "6"), ("sixinferior", "\u{2086}"), ("sixsuperior", "\u{2076}"), ("slash", "/"),
    ("smileface", "\u{263a}"), ("softhyphen", "\u{ad}"), ("space", " "), ("spade", "\u{2660}"),
    ("st", "st"), ("sterling", "\u{a3}"), ("suchthat", "\u{220b}"), ("summation", "\u{2211}"),
    ("sun", "\u{263c}"), ("t", "t"), ("tau", "\u{3c4}"), ("tbar", "\u{167}"),
    ("tcaron", "\u{165}"), ("tcedilla", "\u{163}"), ("tcommaaccent", "\u{163}"),
    ("therefore", "\u{2234}"), ("theta", "\u{3b8}"), ("theta1", "\u{3d1}"), ("thorn", "\u{fe}"),
    ("three", "3"), ("threeeighths", "\u{215c}"), ("threeinferior", "\u{2083}"),
    ("threequarters", "\u{be}"), ("threesuperior", "\u{b3}"), ("tilde", "\u{2dc}"),
    ("tonos", "\u{384}"), ("trademark", "\u{2122}"), ("trademarksans", "\u{2122}"),
    ("trademarkserif", "\u{2122}"), ("triagdn", "\u{25bc}"), ("triagup", "\u{25b2}"),
    ("two", "2"), ("twodotenleader", "\u{2025}"), ("twoinferior", "\u{2082}"),
    ("twosuperior", "\u{b2}"), ("twothirds", "\u{2154}"), ("u", "u"), ("uacute", "\u{fa}"),
    ("ubreve", "\u{16d}"), ("ucircumflex", "\u{fb}"), ("udieresis", "\u{fc}"),
    ("ugrave", "\u{f9}"), ("uhorn", "\u{1b0}"), ("uhungarumlaut", "\u{171}"),
    ("umacron", "\u{16b}"), ("underscore", "_"), ("underscoredbl", "\u{2017}"),
    ("uni00A0", "\u{a0}"), ("union", "\u{222a}"), ("universal", "\u{2200}"),
    ("uogonek", "\u{173}"), ("upblock", "\u{2580}"), ("upsilon", "\u{3c5}"),
    ("upsilondieresis", "\u{3cb}"), ("upsilondieresistonos", "\u{3b0}"),
    ("upsilontonos", "\u{3cd}"), ("uring", "\u{16f}"), ("utilde", "\u{169}"), ("v", "v"),
    ("w", "w"), ("wcircumflex", "\u{175}"), ("weierstrass", "\u{2118}"),
    ("whitestar", "\u{2606}"), ("x", "x"), ("xi", "\u{3be}"), ("y", "y"), ("yacute", "\u{fd}"),
    ("ycircumflex", "\u{177}"), ("ydieresis", "\u{ff}"), ("yen", "\u{a5}"), ("z", "z"),
    ("zacute", "\u{17a}"), ("zcaron", "\u{17e}"), ("zdotaccent", "\u{17c}"), ("zero", "0"),
    ("zeroinferior", "\u{2080}"), ("zerosuperior", "\u{2070}"), ("zeta", "\u{3b6}"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn text(name: &str) -> Option<String> {
        glyph_text(name.as_bytes())
    }

    #[test]
    fn table_is_sorted() {
        assert!(GLYPHS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn names() {
        assert_eq!(text("A").as_deref(), Some("A"));
        assert_eq!(text("eacute").as_deref(), Some("é"));
        assert_eq!(text("Scaron").as_deref(), Some("Š"));
        assert_eq!(text("quoteright").as_deref(), Some("’"));
        assert_eq!(text("fi").as_deref(), Some("fi"));
        assert_eq!(text("alpha").as_deref(), Some("α"));
        assert_eq!(text("sigma1").as_deref(), Some("ς"));
        assert_eq!(text("afii10017").as_deref(), Some("А"));
        assert_eq!(text("afii10097").as_deref(), Some("я"));
        assert_eq!(text("afii10071").as_deref(), Some("ё"));
        assert_eq!(text("uni00E9").as_deref(), Some("é"));
        assert_eq!(text("uni00660069").as_deref(), Some("fi"));
        assert_eq!(text("u1F600").as_deref(), Some("😀"));
        assert_eq!(text("uniD800"), None);
        assert_eq!(text("a.sc").as_deref(), Some("a"));
        assert_eq!(text("f_f_i").as_deref(), Some("ffi"));
        assert_eq!(text("g123"), None);
        assert_eq!(text(".notdef"), None);
    }
}

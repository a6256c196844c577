//! Closed-class and grammatical vocabulary: function words, auxiliaries,
//! particles, clause breaks, common verbs, units, calendar words.
//!
//! Owns data only; lookups go through `lexicon`. Must never: hold names of
//! particular people, places or products (those live in `names`), or
//! entries that are not lowercase (tests enforce sorted, lowercase lists).
//! Edit by hand; keep each list sorted.

use super::lexicon::Lex;

/// Function words, pronouns, auxiliaries, prepositions, conjunctions, interjections and sentence adverbs. Never the start of a name at a sentence-initial position, never part of a concept phrase.
#[rustfmt::skip]
pub(super) const STOPWORDS: Lex = Lex {
    bit: 0,
    words: &[
        "a", "about", "above", "absolutely", "across", "actually", "after", "afterwards", "again",
        "against", "ago", "ah", "all", "almost", "along", "already", "also", "although", "always",
        "am", "among", "an", "and", "another", "any", "anybody", "anyone", "anything", "anyway",
        "anywhere", "apparently", "are", "aren't", "around", "as", "at", "away", "basically", "be",
        "became", "because", "become", "becomes", "been", "before", "behind", "being", "below",
        "beside", "besides", "between", "beyond", "both", "but", "by", "can", "can't", "cannot",
        "congrats", "could", "couldn't", "definitely", "did", "didn't", "do", "does", "doesn't",
        "doing", "don't", "done", "down", "during", "each", "either", "else", "elsewhere",
        "enough", "especially", "even", "ever", "every", "everybody", "everyone", "everything",
        "everywhere", "except", "few", "finally", "for", "fortunately", "from", "further",
        "furthermore", "had", "hadn't", "haha", "has", "hasn't", "have", "haven't", "having", "he",
        "he'd", "he'll", "he's", "hello", "her", "here", "hers", "herself", "hey", "hi", "him",
        "himself", "his", "hmm", "honestly", "how", "however", "i", "i'd", "i'll", "i'm", "i've",
        "if", "in", "indeed", "inside", "instead", "into", "is", "isn't", "it", "it'd", "it'll",
        "it's", "its", "itself", "just", "last", "least", "less", "let", "let's", "like", "lol",
        "luckily", "many", "may", "maybe", "me", "meanwhile", "might", "mine", "more", "moreover",
        "most", "mostly", "much", "must", "my", "myself", "near", "nearly", "neither", "never",
        "nevertheless", "next", "no", "nobody", "none", "nope", "nor", "not", "nothing", "now",
        "nowhere", "of", "off", "often", "oh", "ok", "okay", "on", "once", "one", "only", "onto",
        "or", "other", "others", "otherwise", "our", "ours", "ourselves", "out", "over", "overall",
        "own", "per", "perhaps", "please", "quite", "rather", "really", "regarding", "same",
        "seriously", "several", "shall", "she", "she'd", "she'll", "she's", "should", "shouldn't",
        "since", "so", "some", "somebody", "someone", "something", "sometimes", "somewhat", "soon",
        "sorry", "still", "such", "than", "thank", "thanks", "that", "that's", "the", "their",
        "theirs", "them", "themselves", "then", "there", "there's", "therefore", "these", "they",
        "they'd", "they'll", "they're", "they've", "this", "those", "though", "through",
        "throughout", "thus", "to", "today", "together", "tomorrow", "tonight", "too", "totally",
        "toward", "towards", "uh", "um", "under", "unfortunately", "unless", "unlike", "until",
        "up", "upon", "us", "very", "via", "was", "wasn't", "we", "we'd", "we'll", "we're",
        "we've", "well", "were", "weren't", "what", "what's", "whatever", "when", "whenever",
        "where", "whereas", "wherever", "whether", "which", "while", "who", "who's", "whoever",
        "whole", "whom", "whose", "why", "will", "with", "within", "without", "won't", "would",
        "wouldn't", "wow", "yeah", "yep", "yes", "yesterday", "yet", "you", "you'd", "you'll",
        "you're", "you've", "your", "yours", "yourself", "yourselves",
    ],
};

/// Content words that are commonly capitalized only because they open a sentence, a heading or a list item ("Meeting notes", "Fixed a bug"). Filtered at initial positions only.
#[rustfmt::skip]
pub(super) const COMMON_CAPS: Lex = Lex {
    bit: 1,
    words: &[
        "action", "actions", "added", "adding", "agenda", "agreed", "answer", "approved",
        "attendees", "background", "blocked", "born", "budget", "bug", "check", "conclusion",
        "congratulations", "contrary", "cool", "current", "date", "decision", "decisions",
        "discussed", "done", "draft", "early", "error", "example", "feature", "first", "fix",
        "fixed", "fixing", "former", "goal", "goals", "good", "got", "great", "issue", "items",
        "late", "latest", "let", "location", "make", "meeting", "minutes", "nice", "note", "notes",
        "overview", "owner", "pending", "plan", "previous", "question", "recap", "recent",
        "release", "reminder", "remove", "removed", "report", "result", "results", "review", "run",
        "running", "second", "see", "send", "set", "shares", "standup", "status", "step", "steps",
        "summary", "sure", "switching", "sync", "third", "tip", "todo", "topic", "total", "update",
        "updates", "upgrading", "use", "using", "warning", "went",
    ],
};

/// Lowercase particles allowed inside a name when followed by another capitalized word ("University of Paris", "Ludwig van Beethoven").
#[rustfmt::skip]
pub(super) const CONNECTORS: Lex = Lex {
    bit: 13,
    words: &[
        "al", "bin", "da", "das", "de", "del", "della", "den", "der", "des", "di", "dos", "du",
        "ibn", "la", "le", "of", "van", "von",
    ],
};

/// Units of measure that turn a preceding number into a quantity mention.
#[rustfmt::skip]
pub(super) const UNITS: Lex = Lex {
    bit: 15,
    words: &[
        "aud", "bps", "bytes", "cad", "celsius", "centuries", "century", "chf", "cm", "cny",
        "cores", "day", "days", "decade", "decades", "dollar", "dollars", "eur", "euro", "euros",
        "fahrenheit", "feet", "foot", "fps", "ft", "gallon", "gallons", "gb", "gbp", "gbps", "ghz",
        "gib", "gigabytes", "grams", "gw", "hour", "hours", "hr", "hrs", "hz", "inch", "inches",
        "inr", "jpy", "kb", "kbps", "kg", "khz", "kib", "kilobytes", "kilograms", "kilometers",
        "kilometres", "km", "km/h", "kph", "kw", "kwh", "lb", "lbs", "liter", "liters", "litre",
        "litres", "mb", "mbps", "megabytes", "meter", "meters", "metre", "metres", "mg", "mhz",
        "mi", "mib", "mile", "miles", "min", "mins", "minute", "minutes", "ml", "mm", "month",
        "months", "mph", "ms", "mw", "mwh", "nm", "ns", "oz", "pb", "percent", "pounds", "pt",
        "px", "qps", "requests", "rpm", "rps", "rupees", "sec", "second", "seconds", "secs", "tb",
        "terabytes", "threads", "tib", "tokens", "ton", "tonnes", "tons", "usd", "users", "volt",
        "volts", "watt", "watts", "week", "weeks", "x", "yd", "year", "years", "yen", "°c", "°f",
        "µs",
    ],
};

/// Time units that may follow a spelled-out number ("two years") or precede "ago".
#[rustfmt::skip]
pub(super) const DURATION_UNITS: Lex = Lex {
    bit: 16,
    words: &[
        "day", "days", "decade", "decades", "hour", "hours", "minute", "minutes", "month",
        "months", "second", "seconds", "week", "weeks", "year", "years",
    ],
};

/// Base forms of verbs common in factual statements. Inflected forms are recognized by suffix stripping.
#[rustfmt::skip]
pub(super) const VERBS: Lex = Lex {
    bit: 17,
    words: &[
        "accept", "achieve", "acquire", "act", "add", "adopt", "affect", "agree", "allow",
        "announce", "answer", "appear", "apply", "appoint", "approve", "argue", "arrange",
        "arrive", "ask", "assign", "assume", "attack", "attempt", "attend", "avoid", "award",
        "bake", "ban", "base", "beat", "become", "begin", "believe", "belong", "benchmark",
        "blame", "block", "book", "border", "borrow", "break", "bring", "build", "bump", "buy",
        "cache", "calculate", "call", "camp", "cancel", "capture", "carry", "catch", "cause",
        "celebrate", "change", "charge", "check", "choose", "claim", "clean", "climb", "close",
        "coach", "collaborate", "collect", "combine", "come", "commit", "compare", "compete",
        "compile", "complain", "complete", "compose", "configure", "confirm", "connect",
        "consider", "consist", "contact", "contain", "continue", "control", "convert", "cook",
        "cooperate", "correct", "cost", "count", "cover", "crash", "create", "cross", "cut",
        "damage", "dance", "deal", "decide", "decline", "decrease", "default", "defeat", "define", "delete",
        "deliver", "demand", "deny", "depend", "deploy", "describe", "design", "destroy",
        "determine", "develop", "diagnose", "die", "direct", "disable", "discover", "discuss",
        "display", "divide", "donate", "download", "draft", "draw", "drink", "drive", "drop",
        "earn", "eat", "edit", "elect", "email", "emit", "employ", "enable", "encourage", "engage",
        "enjoy", "enroll", "enter", "establish", "evaluate", "examine", "exist", "expand",
        "expect", "explain", "explore", "export", "express", "extend", "face", "fail", "fall",
        "feel", "fetch", "fight", "file", "fill", "find", "finish", "fire", "fit", "fix", "flow",
        "fly", "focus", "follow", "force", "forget", "fork", "form", "found", "fund", "gain",
        "gather", "generate", "get", "give", "go", "graduate", "grow", "handle", "happen", "hate",
        "have", "head", "hear", "help", "hike", "hire", "hold", "host", "hurt", "identify",
        "ignore", "imagine", "implement", "import", "improve", "include", "increase", "index",
        "indicate", "inform", "inherit", "inspire", "install", "introduce", "invent", "invest",
        "invoke", "involve", "join", "jump", "keep", "kick", "kill", "know", "land", "laugh",
        "launch", "lead", "learn", "lease", "leave", "lend", "let", "lie", "like", "limit", "link",
        "listen", "live", "load", "locate", "lock", "log", "look", "lose", "love", "maintain",
        "make", "manage", "manufacture", "mark", "marry", "match", "mean", "measure", "meet",
        "mention", "merge", "migrate", "miss", "mix", "monitor", "move", "name", "need", "notice",
        "obtain", "occur", "offer", "open", "operate", "order", "organize", "own", "pack", "paint",
        "parse", "partner", "pass", "patch", "pay", "perform", "pick", "place", "plan", "play",
        "point", "post", "postpone", "practice", "predict", "prefer", "prepare", "present",
        "press", "prevent", "print", "process", "produce", "profile", "promise", "protect",
        "prove", "provide", "publish", "pull", "push", "put", "query", "raise", "reach", "read",
        "realize", "receive", "recognize", "recommend", "record", "recover", "reduce", "refactor",
        "refer", "refuse", "regard", "reject", "relax", "release", "rely", "remain", "remember",
        "remove", "render", "rent", "repair", "repeat", "replace", "report", "represent",
        "request", "require", "rescue", "resign", "resolve", "respond", "restart", "restore",
        "retire", "return", "reveal", "review", "rewrite", "ride", "rise", "risk", "roll",
        "rotate", "run", "rush", "save", "say", "scan", "schedule", "score", "search", "see",
        "seem", "select", "sell", "send", "separate", "serve", "set", "settle", "shake", "share",
        "ship", "shoot", "shout", "show", "sign", "sing", "sit", "sleep", "smile", "solve", "sort",
        "speak", "spend", "sponsor", "stand", "star", "start", "stay", "stop", "store", "struggle",
        "study", "submit", "succeed", "sue", "suffer", "suggest", "support", "surprise", "survive",
        "swim", "switch", "sync", "take", "talk", "teach", "tell", "test", "think", "throw",
        "touch", "track", "trade", "train", "transfer", "transform", "translate", "travel",
        "treat", "trigger", "trust", "try", "turn", "understand", "unlock", "upgrade", "upload",
        "use", "validate", "verify", "view", "visit", "volunteer", "vote", "wait", "walk", "want",
        "warn", "wash", "watch", "wear", "win", "wish", "wonder", "work", "worry", "wrap", "write",
    ],
};

/// Irregular past tenses and participles ("went", "born") that suffix stripping cannot recover.
#[rustfmt::skip]
pub(super) const IRREGULAR_VERBS: Lex = Lex {
    bit: 18,
    words: &[
        "ate", "began", "begun", "bent", "bit", "bled", "bore", "born", "borne", "bought", "bound",
        "bred", "broke", "broken", "brought", "built", "came", "caught", "chose", "chosen", "cost",
        "cut", "dealt", "did", "done", "drank", "drawn", "drew", "driven", "drove", "dug", "eaten",
        "fed", "fell", "felt", "fled", "flew", "flown", "forgave", "forgot", "forgotten", "fought",
        "found", "froze", "gave", "given", "gone", "got", "gotten", "grew", "grown", "had", "held",
        "hid", "hit", "hung", "hurt", "kept", "knew", "known", "laid", "lay", "led", "left",
        "lent", "let", "lit", "lost", "made", "meant", "met", "paid", "put", "quit", "ran", "rang",
        "read", "rode", "rose", "said", "sang", "sat", "saw", "seen", "sent", "set", "shook",
        "shot", "shut", "slept", "sold", "spent", "split", "spoke", "spoken", "spread", "stole",
        "stood", "struck", "sung", "swam", "swore", "taken", "taught", "thought", "threw",
        "thrown", "told", "took", "tore", "understood", "went", "withdrew", "woke", "won", "wore",
        "worn", "written", "wrote",
    ],
};

/// Forms of "to be" (including clitics), normalized to the predicate "is".
#[rustfmt::skip]
pub(super) const COPULAS: Lex = Lex {
    bit: 19,
    words: &[
        "'m", "'re", "'s", "am", "are", "be", "been", "being", "is", "was", "were",
    ],
};

/// Auxiliary and modal verbs dropped from predicates.
#[rustfmt::skip]
pub(super) const AUXILIARIES: Lex = Lex {
    bit: 20,
    words: &[
        "'d", "'ll", "'ve", "can", "could", "did", "do", "does", "had", "has", "have", "having",
        "may", "might", "must", "shall", "should", "will", "would",
    ],
};

/// Contractions that carry both an auxiliary/copula and a negation.
#[rustfmt::skip]
pub(super) const NEGATED_AUXILIARIES: Lex = Lex {
    bit: 21,
    words: &[
        "ain't", "aren't", "can't", "cannot", "couldn't", "didn't", "doesn't", "don't", "hadn't",
        "hasn't", "haven't", "isn't", "mightn't", "mustn't", "needn't", "shan't", "shouldn't",
        "wasn't", "weren't", "won't", "wouldn't",
    ],
};

/// Adverbs dropped from predicates (words ending in -ly are dropped too, see LY_NOT_ADVERBS).
#[rustfmt::skip]
pub(super) const ADVERBS: Lex = Lex {
    bit: 22,
    words: &[
        "again", "already", "also", "always", "currently", "even", "eventually", "ever", "finally",
        "first", "formally", "initially", "just", "later", "meanwhile", "now", "officially",
        "often", "once", "only", "originally", "previously", "quickly", "rarely", "really",
        "recently", "reportedly", "seldom", "sometimes", "soon", "still", "subsequently", "then",
        "together", "usually", "yet",
    ],
};

/// Words ending in -ly that are not adverbs.
#[rustfmt::skip]
pub(super) const LY_NOT_ADVERBS: Lex = Lex {
    bit: 23,
    words: &[
        "ally", "apply", "assembly", "belly", "bully", "comply", "family", "fly", "hilly", "holy",
        "imply", "italy", "jelly", "july", "multiply", "ply", "rally", "rely", "reply", "supply",
        "ugly",
    ],
};

/// Words that open a new clause; the text between two mentions containing one is not a single predicate.
#[rustfmt::skip]
pub(super) const CLAUSE_BREAKS: Lex = Lex {
    bit: 24,
    words: &[
        "according", "after", "although", "because", "before", "but", "despite", "if", "since",
        "so", "than", "that", "though", "unless", "until", "when", "where", "whereas", "whether",
        "which", "while", "who", "whom", "whose",
    ],
};

/// Verbs of saying and thinking that take a clause, not an object: "Bob said Acme ..." is not (Bob, said, Acme).
#[rustfmt::skip]
pub(super) const SPEECH_VERBS: Lex = Lex {
    bit: 25,
    words: &[
        "argued", "believe", "believed", "believes", "claimed", "claims", "expects", "explained",
        "feel", "feels", "felt", "guess", "hope", "hoped", "hopes", "knew", "know", "knows",
        "noted", "reported", "said", "say", "says", "stated", "suppose", "think", "thinks",
        "thought",
    ],
};

/// Determiners and possessive pronouns that open a concept noun phrase.
#[rustfmt::skip]
pub(super) const DETERMINERS: Lex = Lex {
    bit: 26,
    words: &[
        "a", "an", "another", "her", "his", "its", "my", "our", "the", "their", "these", "this",
        "those", "your",
    ],
};

/// Evaluative, size and degree adjectives: dropped from the front of a concept phrase ("a great support group" -> "support group"), and never its head.
#[rustfmt::skip]
pub(super) const ADJ_DROP: Lex = Lex {
    bit: 27,
    words: &[
        "additional", "amazing", "awesome", "bad", "basic", "beautiful", "best", "big", "blank",
        "certain", "clear", "common", "cool", "correct", "different", "easy", "empty", "entire",
        "extra", "fantastic", "favorite", "favourite", "full", "good", "great", "hard", "huge",
        "large", "little", "long", "lovely", "main", "major", "minor", "new", "nice", "official",
        "old", "other", "own", "particular", "proper", "quick", "real", "same", "separate",
        "short", "simple", "small", "specific", "terrible", "tiny", "usual", "various", "whole",
        "wonderful", "worst", "wrong",
    ],
};

/// Heads too generic to be useful graph nodes ("the deal", "a lot").
#[rustfmt::skip]
pub(super) const GENERIC_NOUNS: Lex = Lex {
    bit: 28,
    words: &[
        "afternoon", "answer", "best", "bit", "case", "chance", "children", "companies", "company",
        "couple", "day", "days", "deal", "detail", "details", "end", "evening", "everyone",
        "everything", "experience", "fact", "family", "feeling", "few", "first", "friend",
        "friends", "fun", "group", "guy", "guys", "help", "home", "house", "idea", "ideas", "info",
        "information", "issue", "job", "kids", "kind", "last", "life", "list", "lot", "lots",
        "matter", "moment", "month", "months", "morning", "most", "need", "news", "next", "night",
        "number", "offer", "one", "ones", "option", "options", "other", "others", "part", "people",
        "person", "place", "plan", "plans", "point", "problem", "question", "reason", "rest",
        "result", "results", "same", "side", "situation", "someone", "something", "sort", "start",
        "story", "stuff", "team", "thing", "things", "time", "times", "type", "use", "way", "ways",
        "week", "weekend", "weeks", "while", "work", "world", "year", "years",
    ],
};

/// Prepositions that weakly mark a following name as a Place (not "from"/"to": "switched from Twilio").
#[rustfmt::skip]
pub(super) const PLACE_PREPOSITIONS: Lex = Lex {
    bit: 31,
    words: &[
        "across", "around", "in", "inside", "near", "outside", "throughout",
    ],
};

/// Words after which a bare four-digit number is read as a year.
#[rustfmt::skip]
pub(super) const YEAR_PREPOSITIONS: Lex = Lex {
    bit: 32,
    words: &[
        "after", "and", "around", "before", "between", "by", "circa", "during", "early", "from",
        "in", "late", "mid", "of", "since", "through", "till", "to", "until",
    ],
};

/// Nouns that follow an identifier as its head ("the parse_config function", "the Ingestor service"); skipped when reading the predicate after it.
#[rustfmt::skip]
pub(super) const HEAD_NOUNS: Lex = Lex {
    bit: 33,
    words: &[
        "app", "application", "binary", "branch", "bucket", "class", "cluster", "command",
        "component", "config", "container", "crate", "database", "endpoint", "extension", "field",
        "file", "flag", "framework", "function", "functions", "helper", "image", "library",
        "macro", "method", "methods", "model", "module", "option", "package", "plugin", "pod",
        "process", "queue", "repo", "repository", "script", "scripts", "server", "service",
        "services", "setting", "struct", "table", "test", "tests", "tool", "topic", "trait",
        "variable", "worker",
    ],
};

/// Prepositions and particles kept at the end of predicates ("works at", "signed up for").
#[rustfmt::skip]
pub(super) const PARTICLES: Lex = Lex {
    bit: 35,
    words: &[
        "about", "across", "after", "against", "along", "around", "as", "at", "before", "behind",
        "by", "down", "for", "from", "in", "into", "near", "of", "off", "on", "onto", "out",
        "over", "through", "to", "toward", "towards", "under", "up", "upon", "via", "with",
        "without",
    ],
};

/// Prepositions after which a previous verb carries over to a new object ("moved from X to Y").
#[rustfmt::skip]
pub(super) const CARRY_PREPOSITIONS: Lex = Lex {
    bit: 36,
    words: &[
        "into", "onto", "to",
    ],
};

/// Month names and abbreviations (see `month_number`).
#[rustfmt::skip]
pub(super) const MONTHS: Lex = Lex {
    bit: 37,
    words: &[
        "apr", "april", "aug", "august", "dec", "december", "feb", "february", "jan", "january",
        "jul", "july", "jun", "june", "mar", "march", "may", "nov", "november", "oct", "october",
        "sep", "sept", "september",
    ],
};

/// Weekday names.
#[rustfmt::skip]
pub(super) const WEEKDAYS: Lex = Lex {
    bit: 38,
    words: &[
        "friday", "monday", "saturday", "sunday", "thursday", "tuesday", "wednesday",
    ],
};

/// Spelled-out small numbers accepted before duration units ("two years").
#[rustfmt::skip]
pub(super) const NUMBER_WORDS: Lex = Lex {
    bit: 39,
    words: &[
        "a", "an", "couple", "eight", "eighteen", "eleven", "few", "fifteen", "fifty", "five",
        "forty", "four", "fourteen", "hundred", "nine", "nineteen", "one", "seven", "seventeen",
        "several", "six", "sixteen", "ten", "thirteen", "thirty", "three", "twelve", "twenty",
        "two",
    ],
};

/// Words naming a relative period after "last"/"next"/"this".
#[rustfmt::skip]
pub(super) const RELATIVE_PERIODS: Lex = Lex {
    bit: 40,
    words: &[
        "autumn", "evening", "fall", "month", "morning", "night", "quarter", "spring", "summer",
        "week", "weekend", "winter", "year",
    ],
};

/// Words for multiples after a money amount ("$30 million").
#[rustfmt::skip]
pub(super) const MULTIPLIERS: Lex = Lex {
    bit: 41,
    words: &[
        "b", "billion", "bn", "k", "m", "million", "thousand", "trillion",
    ],
};

/// Abbreviations (without the final period) after which a period never ends a sentence.
#[rustfmt::skip]
pub(super) const ABBREVIATIONS_STRONG: Lex = Lex {
    bit: 43,
    words: &[
        "a.k.a", "al", "approx", "apr", "aug", "ca", "capt", "cf", "col", "dec", "dept", "dr",
        "e.g", "ed", "eds", "est", "feb", "fig", "ft", "gen", "gov", "i.e", "jan", "jr", "jul",
        "jun", "lt", "mar", "mr", "mrs", "ms", "mt", "mx", "no", "nos", "nov", "oct", "ph.d",
        "prof", "rev", "sep", "sept", "sgt", "sr", "st", "vol", "vs",
    ],
};

/// Abbreviations after which a period ends a sentence only when a clear sentence opener follows ("... Inc. The deal ...").
#[rustfmt::skip]
pub(super) const ABBREVIATIONS_WEAK: Lex = Lex {
    bit: 44,
    words: &[
        "a.m", "am", "co", "corp", "etc", "inc", "llc", "ltd", "p.m", "plc", "pm", "u.k", "u.s",
        "u.s.a",
    ],
};

//! Small, committed word lists that drive the rule-based extractor.
//!
//! Owns every vocabulary the extractor consults: stopwords, honorifics,
//! given names, places, organizations, units, verbs, and so on. Lists are
//! kept sorted (a unit test enforces it) so lookups are a binary search with
//! an allocation-free, ASCII case-folding comparison.
//!
//! Must never: grow into a gazetteer (keep each list to a few hundred
//! entries; the rules, not the lists, should do the work), or hold anything
//! but lowercase ASCII-ish entries (multi-word entries use single spaces).
//!
//! The lists are generated from a short script and checked in; edit them by
//! hand freely, the sortedness test will catch ordering mistakes.

use std::cmp::Ordering;

/// Case-folds one character the way lexicon entries are written: ASCII
/// lowercase, typographic apostrophes as `'`, other letters lowercased when
/// that yields a single character.
pub(super) fn fold(c: char) -> char {
    match c {
        '\u{2019}' | '\u{2018}' => '\'',
        c if c.is_ascii() => c.to_ascii_lowercase(),
        c => {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => l,
                _ => c,
            }
        }
    }
}

/// Compares a (lowercase) lexicon entry with a word, folding the word.
fn cmp_folded(entry: &str, word: &str) -> Ordering {
    entry.chars().cmp(word.chars().map(fold))
}

/// True when `word` (any case) is in the sorted `list`.
pub(super) fn contains(list: &[&str], word: &str) -> bool {
    list.binary_search_by(|probe| cmp_folded(probe, word)).is_ok()
}

/// Looks `word` (any case) up in a sorted table of `(entry, value)` pairs.
pub(super) fn lookup<T: Copy>(table: &[(&str, T)], word: &str) -> Option<T> {
    table
        .binary_search_by(|(probe, _)| cmp_folded(probe, word))
        .ok()
        .map(|i| table[i].1)
}

/// Function words, pronouns, auxiliaries, prepositions, conjunctions, interjections and sentence adverbs. Never the start of a name at a sentence-initial position, never part of a concept phrase.
pub(super) const STOPWORDS: &[&str] = &[
    "a", "about", "above", "absolutely", "across", "actually", "after", "afterwards", "again",
    "against", "ago", "ah", "all", "almost", "along", "already", "also", "although", "always",
    "am", "among", "an", "and", "another", "any", "anybody", "anyone", "anything", "anyway",
    "anywhere", "apparently", "are", "aren't", "around", "as", "at", "away", "basically", "be",
    "became", "because", "become", "becomes", "been", "before", "behind", "being", "below",
    "beside", "besides", "between", "beyond", "both", "but", "by", "can", "can't", "cannot",
    "congrats", "could", "couldn't", "definitely", "did", "didn't", "do", "does", "doesn't",
    "doing", "don't", "done", "down", "during", "each", "either", "else", "elsewhere", "enough",
    "especially", "even", "ever", "every", "everybody", "everyone", "everything", "everywhere",
    "except", "few", "finally", "first", "for", "fortunately", "from", "further", "furthermore",
    "had", "hadn't", "haha", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll",
    "he's", "hello", "her", "here", "hers", "herself", "hey", "hi", "him", "himself", "his", "hmm",
    "honestly", "how", "however", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "indeed",
    "inside", "instead", "into", "is", "isn't", "it", "it'd", "it'll", "it's", "its", "itself",
    "just", "last", "least", "less", "let", "let's", "like", "lol", "luckily", "many", "may",
    "maybe", "me", "meanwhile", "might", "mine", "more", "moreover", "most", "mostly", "much",
    "must", "my", "myself", "near", "nearly", "neither", "never", "nevertheless", "next", "no",
    "nobody", "none", "nope", "nor", "not", "nothing", "now", "nowhere", "of", "off", "often",
    "oh", "ok", "okay", "on", "once", "one", "only", "onto", "or", "other", "others", "otherwise",
    "our", "ours", "ourselves", "out", "over", "overall", "own", "per", "perhaps", "please",
    "quite", "rather", "really", "regarding", "same", "second", "seriously", "several", "shall",
    "she", "she'd", "she'll", "she's", "should", "shouldn't", "since", "so", "some", "somebody",
    "someone", "something", "sometimes", "somewhat", "soon", "sorry", "still", "such", "than",
    "thank", "thanks", "that", "that's", "the", "their", "theirs", "them", "themselves", "then",
    "there", "there's", "therefore", "these", "they", "they'd", "they'll", "they're", "they've",
    "third", "this", "those", "though", "through", "throughout", "thus", "to", "today", "together",
    "tomorrow", "tonight", "too", "totally", "toward", "towards", "uh", "um", "under",
    "unfortunately", "unless", "unlike", "until", "up", "upon", "us", "very", "via", "was",
    "wasn't", "we", "we'd", "we'll", "we're", "we've", "well", "were", "weren't", "what", "what's",
    "whatever", "when", "whenever", "where", "whereas", "wherever", "whether", "which", "while",
    "who", "who's", "whoever", "whole", "whom", "whose", "why", "will", "with", "within",
    "without", "won't", "would", "wouldn't", "wow", "yeah", "yep", "yes", "yesterday", "yet",
    "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves",
];

/// Content words that are commonly capitalized only because they open a sentence, a heading or a list item ("Meeting notes", "Fixed a bug"). Filtered at initial positions only.
pub(super) const COMMON_CAPS: &[&str] = &[
    "action", "actions", "added", "adding", "agenda", "agreed", "answer", "approved", "attendees",
    "background", "blocked", "born", "budget", "bug", "check", "conclusion", "congratulations",
    "contrary", "cool", "date", "decision", "decisions", "discussed", "done", "draft", "error",
    "example", "feature", "fix", "fixed", "fixing", "goal", "goals", "good", "got", "great",
    "issue", "items", "let", "location", "make", "meeting", "minutes", "nice", "note", "notes",
    "overview", "owner", "pending", "plan", "question", "recap", "release", "reminder", "remove",
    "removed", "report", "result", "results", "review", "run", "running", "see", "send", "set",
    "shares", "standup", "status", "step", "steps", "summary", "sure", "switching", "sync", "tip",
    "todo", "topic", "total", "update", "updates", "upgrading", "use", "using", "warning", "went",
];

/// Titles that precede a person's name; stripped from the name span and a strong Person cue.
pub(super) const HONORIFICS: &[&str] = &[
    "aunt", "capt", "captain", "chancellor", "coach", "col", "colonel", "dame", "detective", "dr",
    "father", "frau", "gen", "general", "gov", "governor", "grandma", "grandpa", "herr", "judge",
    "justice", "king", "lady", "lieutenant", "lord", "lt", "madam", "madame", "mayor", "minister",
    "miss", "monsieur", "mr", "mrs", "ms", "mx", "officer", "pope", "president", "prince",
    "princess", "prof", "professor", "queen", "rep", "rev", "reverend", "sen", "senator",
    "sergeant", "sgt", "sir", "uncle",
];

/// Role nouns used in "X, the ROLE of Y" / "Y's ROLE X" patterns; role acronyms (CEO) are not entities on their own.
pub(super) const ROLES: &[&str] = &[
    "adviser", "advisor", "analyst", "architect", "author", "boss", "brother", "capital",
    "captain", "ceo", "cfo", "chair", "chairman", "chairwoman", "chief", "cio", "ciso", "cmo",
    "co-founder", "coach", "cofounder", "colleague", "consultant", "coo", "cousin", "cpo",
    "creator", "cto", "daughter", "dean", "designer", "developer", "director", "division",
    "editor", "employee", "engineer", "evp", "father", "founder", "friend", "governor", "head",
    "husband", "intern", "lead", "maintainer", "manager", "mayor", "member", "mentor", "minister",
    "mother", "neighbor", "neighbour", "officer", "owner", "partner", "president", "principal",
    "professor", "researcher", "scientist", "secretary", "sister", "son", "spokesman",
    "spokesperson", "spokeswoman", "student", "subsidiary", "svp", "unit", "vp", "wife",
];

/// Common given names (a small, deliberately international sample). A first token found here is a Person cue.
pub(super) const GIVEN_NAMES: &[&str] = &[
    "aaron", "abigail", "adam", "adrian", "ahmed", "aisha", "alan", "albert", "alex", "alexander",
    "alexandra", "alice", "alicia", "amanda", "amara", "amelia", "amir", "amy", "ana", "andrea",
    "andrew", "angela", "anna", "anne", "anthony", "antonio", "arjun", "arthur", "ava", "barbara",
    "ben", "benjamin", "beth", "bill", "bob", "brandon", "brian", "bruce", "carl", "carlos",
    "carmen", "caroline", "catherine", "charles", "charlie", "charlotte", "chen", "chinedu",
    "chloe", "chris", "christina", "christopher", "claire", "daniel", "david", "deborah", "dennis",
    "diana", "diego", "dmitri", "donald", "dorothy", "edward", "elena", "eli", "elizabeth", "ella",
    "emily", "emma", "eric", "ethan", "eva", "evan", "fatima", "fatou", "felix", "fernando",
    "francois", "frank", "gabriel", "gary", "george", "gina", "giulia", "grace", "hannah", "hans",
    "harry", "haruto", "helen", "henry", "hiroshi", "hugo", "ian", "isaac", "isabel", "isabella",
    "ivan", "jack", "jacob", "james", "jane", "janet", "jason", "jean", "jeff", "jennifer",
    "jessica", "jim", "jin", "joan", "joe", "john", "jon", "jonathan", "jorge", "jose", "joseph",
    "joshua", "juan", "julia", "julie", "jurgen", "justin", "karen", "kate", "katherine", "kevin",
    "kim", "klaus", "kwame", "larry", "laura", "lauren", "leo", "li", "liam", "linda", "lisa",
    "luca", "lucas", "lucy", "luis", "lukas", "marco", "maria", "marie", "mark", "martin", "mary",
    "matthew", "maya", "megan", "melanie", "mia", "michael", "michelle", "mike", "min", "mohammed",
    "muhammad", "nancy", "natalie", "natasha", "nathan", "ngozi", "nicole", "nina", "noah", "olga",
    "olivia", "omar", "oscar", "pablo", "patricia", "paul", "peter", "pierre", "priya", "rachel",
    "rahul", "raj", "ravi", "rebecca", "richard", "robert", "ruth", "ryan", "sakura", "sam",
    "samantha", "samuel", "sandra", "sara", "sarah", "scott", "sean", "sergei", "sofia", "sophia",
    "sophie", "stephen", "steve", "steven", "susan", "thomas", "tim", "timothy", "tom", "tony",
    "victor", "victoria", "vincent", "walter", "wei", "william", "yuki", "yuto", "zoe",
];

/// Countries, regions and major cities. A whole-span match is a strong Place cue.
pub(super) const PLACES: &[&str] = &[
    "afghanistan", "africa", "alabama", "alaska", "albania", "algeria", "amsterdam", "andorra",
    "angola", "antarctica", "argentina", "arizona", "arkansas", "armenia", "asia", "athens",
    "atlanta", "auckland", "austin", "australia", "austria", "azerbaijan", "baghdad", "bahamas",
    "bahrain", "bangalore", "bangkok", "bangladesh", "barcelona", "bay area", "beijing", "belarus",
    "belgium", "belgrade", "berlin", "bern", "bogota", "bolivia", "bombay", "bosnia", "boston",
    "brazil", "brisbane", "brussels", "bucharest", "budapest", "buenos aires", "bulgaria", "cairo",
    "calcutta", "california", "cambodia", "cameroon", "canada", "canberra", "cape town", "caracas",
    "chennai", "chicago", "chile", "china", "cologne", "colombia", "colorado", "connecticut",
    "copenhagen", "croatia", "cuba", "cyprus", "czechia", "dallas", "dc", "delaware", "delhi",
    "denmark", "denver", "detroit", "dhaka", "dubai", "dublin", "east coast", "ecuador",
    "edinburgh", "egypt", "england", "estonia", "ethiopia", "europe", "finland", "florence",
    "florida", "france", "frankfurt", "geneva", "georgia", "germany", "ghana", "glasgow", "greece",
    "guatemala", "haiti", "hamburg", "hanoi", "havana", "hawaii", "helsinki", "hong kong",
    "honolulu", "houston", "hungary", "iceland", "idaho", "illinois", "india", "indiana",
    "indonesia", "iowa", "iran", "iraq", "ireland", "israel", "istanbul", "italy", "jakarta",
    "jamaica", "japan", "jerusalem", "jordan", "kansas", "karachi", "kazakhstan", "kentucky",
    "kenya", "kiev", "korea", "kosovo", "kuwait", "kyiv", "kyoto", "lagos", "laos",
    "latin america", "latvia", "lebanon", "libya", "lisbon", "lithuania", "liverpool", "london",
    "los angeles", "louisiana", "luxembourg", "lyon", "madrid", "maine", "malaysia", "manchester",
    "manila", "maryland", "massachusetts", "melbourne", "mexico", "mexico city", "miami",
    "michigan", "middle east", "milan", "minnesota", "mississippi", "missouri", "monaco",
    "mongolia", "montana", "montenegro", "montreal", "morocco", "moscow", "mumbai", "munich",
    "myanmar", "nairobi", "naples", "nebraska", "nepal", "netherlands", "nevada", "new delhi",
    "new hampshire", "new jersey", "new mexico", "new york", "new york city", "new zealand",
    "nicaragua", "nigeria", "north america", "north carolina", "north korea", "norway", "nyc",
    "oakland", "ohio", "oklahoma", "oman", "ontario", "oregon", "osaka", "oslo", "ottawa",
    "pakistan", "palestine", "panama", "paraguay", "paris", "pennsylvania", "perth", "peru",
    "philadelphia", "philippines", "phoenix", "poland", "portland", "portugal", "prague",
    "puerto rico", "qatar", "quebec", "rhode island", "riga", "rio de janeiro", "romania", "rome",
    "russia", "rwanda", "san diego", "san francisco", "san jose", "santiago", "sao paulo",
    "saudi arabia", "scotland", "seattle", "senegal", "seoul", "serbia", "sf", "shanghai",
    "shenzhen", "silicon valley", "singapore", "slovakia", "slovenia", "somalia", "south africa",
    "south america", "south carolina", "south korea", "spain", "sri lanka", "stockholm", "sudan",
    "sweden", "switzerland", "sydney", "syria", "taipei", "taiwan", "tallinn", "tanzania",
    "tehran", "tel aviv", "tennessee", "texas", "thailand", "tokyo", "toronto", "tunisia",
    "turkey", "u.k", "u.s", "u.s.a", "uae", "uganda", "uk", "ukraine", "united kingdom",
    "united states", "uruguay", "us", "usa", "utah", "uzbekistan", "vancouver", "venezuela",
    "venice", "vermont", "victoria", "vienna", "vietnam", "virginia", "wales", "warsaw",
    "washington", "wellington", "west coast", "wisconsin", "wyoming", "yemen", "zambia",
    "zimbabwe", "zurich",
];

/// Well-known organizations, including acronyms and CamelCase brands that would otherwise look like artifacts.
pub(super) const KNOWN_ORGS: &[&str] = &[
    "acm", "adobe", "airbnb", "alibaba", "amazon", "amd", "anthropic", "apple", "baidu", "bbc",
    "bmw", "boeing", "cdc", "cern", "cia", "cisco", "cnn", "deepmind", "dell", "disney", "dropbox",
    "ebay", "ecb", "epa", "esa", "eu", "facebook", "fbi", "fda", "fifa", "ford", "github",
    "gitlab", "google", "hsbc", "huawei", "ibm", "ieee", "ietf", "ikea", "imf", "intel",
    "interpol", "linkedin", "meta", "microsoft", "mit", "mozilla", "nasa", "nato", "nba",
    "netflix", "nfl", "nhs", "nih", "noaa", "nsa", "nsf", "nvidia", "oecd", "opec", "openai",
    "oracle", "paypal", "pfizer", "reuters", "salesforce", "samsung", "shopify", "siemens",
    "slack", "sony", "spacex", "spotify", "stanford", "stripe", "tesla", "toyota", "tsmc",
    "twitter", "uber", "ucla", "un", "unesco", "unicef", "visa", "volkswagen", "w3c", "walmart",
    "who", "wikipedia", "wto", "yahoo", "youtube", "zoom",
];

/// Well-known software, languages, platforms and hardware product names (Artifact cue). Includes a few lowercase tool names that are detected even without capitalization.
pub(super) const TECH: &[&str] = &[
    "android", "angular", "ansible", "api", "apis", "arduino", "aws", "azure", "bash", "c++",
    "cargo", "chrome", "chromium", "clang", "cli", "clojure", "cobol", "confluence", "cpu", "css",
    "csv", "curl", "dart", "debian", "deno", "django", "dns", "docker", "duckdb", "elasticsearch",
    "elixir", "emacs", "erlang", "excel", "fastapi", "figma", "firefox", "flask", "fortran", "gcc",
    "gcp", "git", "gpu", "graphql", "grpc", "haskell", "html", "http", "https", "ide", "ios",
    "ipad", "iphone", "java", "javascript", "jenkins", "jira", "jquery", "json", "julia",
    "jupyter", "jvm", "k8s", "kafka", "keras", "kotlin", "kubernetes", "linear", "linux", "llm",
    "llvm", "lua", "macos", "matlab", "mcp", "mongodb", "mysql", "nginx", "node", "nodejs",
    "notion", "npm", "numpy", "oauth", "ocaml", "pandas", "perl", "php", "pip", "postgres",
    "postgresql", "postman", "powershell", "python", "pytorch", "rabbitmq", "rag", "ram", "react",
    "redis", "ruby", "rust", "rustc", "s3", "scala", "scipy", "sdk", "serde", "slack", "sql",
    "sqlite", "ssd", "ssh", "svelte", "swift", "tcp", "tensorflow", "terraform", "tls", "tokio",
    "toml", "tpu", "typescript", "ubuntu", "udp", "unix", "usb", "vim", "vscode", "vue", "wasm",
    "webassembly", "windows", "xml", "yaml", "zig",
];

/// Tool and library names that are conventionally written in lowercase and are safe to detect as Artifacts anyway.
pub(super) const LOWERCASE_TECH: &[&str] = &[
    "cargo", "curl", "docker", "git", "kubectl", "nginx", "npm", "numpy", "pandas", "pip",
    "pytorch", "redis", "rustc", "scipy", "serde", "sqlite", "tokio", "vim",
];

/// Words that make a capitalized span an Organization wherever they occur in it ("Stanford University", "University of Paris").
pub(super) const ORG_WORDS: &[&str] = &[
    "academy", "agency", "airlines", "alliance", "army", "association", "authority", "bank",
    "bureau", "capital", "center", "centre", "church", "club", "co", "college", "commission",
    "committee", "company", "corp", "corporation", "council", "court", "department", "electronics",
    "exchange", "federation", "foundation", "gmbh", "group", "holdings", "hospital", "inc",
    "incorporated", "industries", "institute", "institution", "lab", "laboratories", "laboratory",
    "labs", "library", "limited", "llc", "ltd", "media", "ministry", "motors", "museum", "navy",
    "networks", "partners", "party", "pharmaceuticals", "plc", "police", "records", "school",
    "society", "software", "solutions", "studios", "systems", "technologies", "technology",
    "trust", "union", "university", "ventures",
];

/// Legal-form suffixes stripped from organization keys so that "Acme Corp." = "Acme Corporation" = "Acme".
pub(super) const CORP_SUFFIXES: &[&str] = &[
    "ab", "ag", "bv", "co", "company", "corp", "corporation", "gmbh", "inc", "incorporated",
    "limited", "llc", "ltd", "nv", "oy", "plc", "pty", "s.a", "sa",
];

/// Final words that make a capitalized span a Place ("Danube River", "Main Street").
pub(super) const PLACE_SUFFIXES: &[&str] = &[
    "airport", "ave", "avenue", "bay", "beach", "blvd", "boulevard", "bridge", "canyon", "city",
    "coast", "county", "creek", "delta", "desert", "district", "falls", "forest", "glacier",
    "gulf", "harbor", "harbour", "heights", "highway", "hill", "hills", "island", "islands",
    "lake", "lakes", "lane", "ln", "mountain", "mountains", "ocean", "park", "peninsula", "plains",
    "plateau", "province", "rd", "region", "river", "road", "sea", "springs", "square", "st",
    "state", "station", "strait", "street", "town", "valley", "village",
];

/// First words that make a multi-word capitalized span a Place ("Mount Everest", "Lake Tahoe").
pub(super) const PLACE_PREFIXES: &[&str] = &[
    "cape", "east", "fort", "isle", "lake", "las", "los", "mount", "mt", "new", "north", "port",
    "san", "santa", "sao", "south", "west",
];

/// Lowercase particles allowed inside a name when followed by another capitalized word ("University of Paris", "Ludwig van Beethoven").
pub(super) const CONNECTORS: &[&str] = &[
    "al", "bin", "da", "das", "de", "del", "della", "den", "der", "des", "di", "dos", "du", "ibn",
    "la", "le", "of", "van", "von",
];

/// Capitalized adjectives of nationality or creed; they modify concepts ("an English mathematician") rather than name entities.
pub(super) const DEMONYMS: &[&str] = &[
    "african", "american", "arab", "arabic", "argentine", "asian", "australian", "austrian",
    "belgian", "brazilian", "british", "buddhist", "canadian", "catholic", "chilean", "chinese",
    "christian", "colombian", "cuban", "czech", "danish", "dutch", "eastern", "egyptian",
    "english", "european", "filipino", "finnish", "french", "german", "greek", "hindu",
    "hungarian", "indian", "indonesian", "iranian", "irish", "israeli", "italian", "jamaican",
    "japanese", "jewish", "kenyan", "korean", "latino", "mexican", "muslim", "nigerian",
    "northern", "norwegian", "pakistani", "persian", "peruvian", "polish", "portuguese", "russian",
    "scandinavian", "scottish", "southern", "spanish", "swedish", "swiss", "thai", "turkish",
    "ukrainian", "vietnamese", "welsh", "western",
];

/// Units of measure that turn a preceding number into a quantity mention.
pub(super) const UNITS: &[&str] = &[
    "aud", "bps", "bytes", "cad", "celsius", "centuries", "century", "chf", "cm", "cny", "cores",
    "day", "days", "decade", "decades", "dollar", "dollars", "eur", "euro", "euros", "fahrenheit",
    "feet", "foot", "fps", "ft", "gallon", "gallons", "gb", "gbp", "gbps", "ghz", "gib",
    "gigabytes", "grams", "gw", "hour", "hours", "hr", "hrs", "hz", "inch", "inches", "inr", "jpy",
    "kb", "kbps", "kg", "khz", "kib", "kilobytes", "kilograms", "kilometers", "kilometres", "km",
    "km/h", "kph", "kw", "kwh", "lb", "lbs", "liter", "liters", "litre", "litres", "mb", "mbps",
    "megabytes", "meter", "meters", "metre", "metres", "mg", "mhz", "mi", "mib", "mile", "miles",
    "min", "mins", "minute", "minutes", "ml", "mm", "month", "months", "mph", "ms", "mw", "mwh",
    "nm", "ns", "oz", "pb", "percent", "pounds", "pt", "px", "qps", "requests", "rpm", "rps",
    "rupees", "sec", "second", "seconds", "secs", "tb", "terabytes", "threads", "tib", "tokens",
    "ton", "tonnes", "tons", "usd", "users", "volt", "volts", "watt", "watts", "week", "weeks",
    "x", "yd", "year", "years", "yen", "°c", "°f", "µs",
];

/// Time units that may follow a spelled-out number ("two years") or precede "ago".
pub(super) const DURATION_UNITS: &[&str] = &[
    "day", "days", "decade", "decades", "hour", "hours", "minute", "minutes", "month", "months",
    "second", "seconds", "week", "weeks", "year", "years",
];

/// Base forms of verbs common in factual statements. Inflected forms are recognized by suffix stripping.
pub(super) const VERBS: &[&str] = &[
    "accept", "acquire", "act", "add", "adopt", "agree", "allow", "announce", "appear", "apply",
    "appoint", "approve", "argue", "arrive", "ask", "attend", "award", "bake", "ban", "base",
    "beat", "become", "begin", "believe", "belong", "benchmark", "block", "border", "borrow",
    "break", "bring", "build", "buy", "cache", "call", "camp", "celebrate", "change", "charge",
    "check", "choose", "claim", "close", "coach", "collaborate", "come", "compete", "compile",
    "complete", "compose", "configure", "confirm", "connect", "consider", "consist", "contact",
    "contain", "continue", "cook", "cooperate", "cost", "create", "cut", "deal", "decide",
    "defeat", "define", "delete", "deny", "depend", "deploy", "describe", "design", "develop",
    "die", "direct", "discover", "discuss", "donate", "draft", "draw", "drive", "drop", "earn",
    "eat", "elect", "email", "emit", "employ", "enjoy", "evaluate", "expect", "explain", "export",
    "extend", "fall", "feel", "fetch", "file", "fill", "find", "finish", "fire", "fix", "flow",
    "fly", "follow", "fork", "found", "fund", "get", "give", "go", "graduate", "grow", "hate",
    "have", "head", "hear", "help", "hike", "hire", "hold", "host", "hurt", "implement", "import",
    "include", "increase", "index", "inherit", "inspire", "install", "introduce", "invent",
    "invest", "invoke", "join", "keep", "kill", "know", "launch", "lead", "learn", "lease",
    "leave", "lend", "let", "like", "link", "listen", "live", "load", "locate", "log", "lose",
    "love", "make", "manage", "manufacture", "marry", "mean", "meet", "mention", "merge",
    "migrate", "move", "name", "need", "offer", "open", "operate", "organize", "own", "paint",
    "parse", "partner", "pass", "patch", "pay", "perform", "plan", "play", "post", "prefer",
    "present", "produce", "profile", "provide", "publish", "pull", "put", "query", "raise",
    "reach", "read", "receive", "recommend", "record", "reduce", "refactor", "refuse", "regard",
    "reject", "release", "rely", "remain", "remember", "remove", "rent", "replace", "report",
    "represent", "require", "resign", "retire", "return", "review", "rewrite", "ride", "run",
    "save", "say", "score", "see", "seem", "sell", "send", "serve", "set", "share", "ship", "show",
    "sign", "sing", "sit", "speak", "spend", "sponsor", "stand", "star", "start", "stay", "stop",
    "store", "study", "succeed", "sue", "suggest", "support", "swim", "take", "talk", "teach",
    "tell", "test", "think", "trade", "train", "travel", "try", "turn", "understand", "upgrade",
    "use", "visit", "volunteer", "wait", "walk", "want", "watch", "win", "work", "write",
];

/// Irregular past tenses and participles ("went", "born") that suffix stripping cannot recover.
pub(super) const IRREGULAR_VERBS: &[&str] = &[
    "ate", "began", "begun", "bent", "bit", "bled", "bore", "born", "borne", "bought", "bound",
    "bred", "broke", "broken", "brought", "built", "came", "caught", "chose", "chosen", "cost",
    "cut", "dealt", "did", "done", "drank", "drawn", "drew", "driven", "drove", "dug", "eaten",
    "fed", "fell", "felt", "fled", "flew", "flown", "forgave", "forgot", "forgotten", "fought",
    "found", "froze", "gave", "given", "gone", "got", "gotten", "grew", "grown", "had", "held",
    "hid", "hit", "hung", "hurt", "kept", "knew", "known", "laid", "lay", "led", "left", "lent",
    "let", "lit", "lost", "made", "meant", "met", "paid", "put", "quit", "ran", "rang", "read",
    "rode", "rose", "said", "sang", "sat", "saw", "seen", "sent", "set", "shook", "shot", "shut",
    "slept", "sold", "spent", "split", "spoke", "spoken", "spread", "stole", "stood", "struck",
    "sung", "swam", "swore", "taken", "taught", "thought", "threw", "thrown", "told", "took",
    "tore", "understood", "went", "withdrew", "woke", "won", "wore", "worn", "written", "wrote",
];

/// Forms of "to be" (including clitics), normalized to the predicate "is".
pub(super) const COPULAS: &[&str] = &[
    "'m", "'re", "'s", "am", "are", "be", "been", "being", "is", "was", "were",
];

/// Auxiliary and modal verbs dropped from predicates.
pub(super) const AUXILIARIES: &[&str] = &[
    "'d", "'ll", "'ve", "can", "could", "did", "do", "does", "had", "has", "have", "having", "may",
    "might", "must", "shall", "should", "will", "would",
];

/// Contractions that carry both an auxiliary/copula and a negation.
pub(super) const NEGATED_AUXILIARIES: &[&str] = &[
    "ain't", "aren't", "can't", "cannot", "couldn't", "didn't", "doesn't", "don't", "hadn't",
    "hasn't", "haven't", "isn't", "mightn't", "mustn't", "needn't", "shan't", "shouldn't",
    "wasn't", "weren't", "won't", "wouldn't",
];

/// Adverbs dropped from predicates (words ending in -ly are dropped too, see LY_NOT_ADVERBS).
pub(super) const ADVERBS: &[&str] = &[
    "again", "already", "also", "always", "currently", "even", "eventually", "ever", "finally",
    "first", "formally", "initially", "just", "later", "meanwhile", "now", "officially", "once",
    "only", "originally", "previously", "quickly", "really", "recently", "reportedly", "soon",
    "still", "subsequently", "then", "together", "usually", "yet",
];

/// Words ending in -ly that are not adverbs.
pub(super) const LY_NOT_ADVERBS: &[&str] = &[
    "ally", "apply", "assembly", "belly", "bully", "comply", "family", "fly", "hilly", "holy",
    "imply", "italy", "jelly", "july", "multiply", "ply", "rally", "rely", "reply", "supply",
    "ugly",
];

/// Words that open a new clause; the text between two mentions containing one is not a single predicate.
pub(super) const CLAUSE_BREAKS: &[&str] = &[
    "according", "after", "although", "because", "before", "but", "despite", "if", "since", "so",
    "than", "that", "though", "unless", "until", "when", "where", "whereas", "whether", "which",
    "while", "who", "whom", "whose",
];

/// Verbs of saying and thinking that take a clause, not an object: "Bob said Acme ..." is not (Bob, said, Acme).
pub(super) const SPEECH_VERBS: &[&str] = &[
    "argued", "believe", "believed", "believes", "claimed", "claims", "expects", "explained",
    "feel", "feels", "felt", "guess", "hope", "hoped", "hopes", "knew", "know", "knows",
    "mentioned", "noted", "reported", "said", "say", "says", "stated", "suppose", "tell", "tells",
    "think", "thinks", "thought", "told",
];

/// Determiners and possessive pronouns that open a concept noun phrase.
pub(super) const DETERMINERS: &[&str] = &[
    "a", "an", "another", "her", "his", "its", "my", "our", "the", "their", "these", "this",
    "those", "your",
];

/// Evaluative adjectives dropped from the front of a concept phrase ("a great support group" -> "support group").
pub(super) const ADJ_DROP: &[&str] = &[
    "amazing", "awesome", "bad", "beautiful", "best", "big", "cool", "entire", "fantastic",
    "favorite", "favourite", "good", "great", "huge", "little", "lovely", "new", "nice", "old",
    "other", "own", "real", "same", "small", "terrible", "whole", "wonderful", "worst",
];

/// Heads too generic to be useful graph nodes ("the deal", "a lot").
pub(super) const GENERIC_NOUNS: &[&str] = &[
    "afternoon", "answer", "best", "bit", "case", "chance", "children", "companies", "company",
    "couple", "day", "days", "deal", "detail", "details", "end", "evening", "everyone",
    "everything", "experience", "fact", "family", "feeling", "few", "first", "friend", "friends",
    "fun", "group", "guy", "guys", "help", "home", "house", "idea", "ideas", "info", "information",
    "issue", "job", "kids", "kind", "last", "life", "list", "lot", "lots", "matter", "moment",
    "month", "months", "morning", "most", "need", "news", "next", "night", "number", "offer",
    "one", "ones", "option", "options", "other", "others", "part", "people", "person", "place",
    "plan", "plans", "point", "problem", "question", "reason", "rest", "result", "results", "same",
    "side", "situation", "someone", "something", "sort", "start", "story", "stuff", "team",
    "thing", "things", "time", "times", "type", "use", "way", "ways", "week", "weekend", "weeks",
    "while", "work", "world", "year", "years",
];

/// All-caps tokens that are chat or business shorthand rather than entities.
pub(super) const ACRONYM_STOP: &[&str] = &[
    "afaik", "aka", "am", "asap", "btw", "cc", "diy", "eod", "eow", "eta", "faq", "fyi", "iirc",
    "imho", "imo", "lgtm", "lol", "nb", "nit", "ok", "omg", "pm", "ps", "ptal", "re", "rsvp",
    "tba", "tbd", "tldr", "todo", "wip",
];

/// Words that, right before "at"/"for"/"with", make the following name an Organization ("works at X").
pub(super) const WORK_CUES: &[&str] = &[
    "employed", "engineer", "hired", "intern", "interned", "interning", "job", "join", "joined",
    "joining", "joins", "student", "students", "studied", "study", "studying", "work", "worked",
    "working", "works",
];

/// Prepositions that weakly mark a following name as a Place.
pub(super) const PLACE_PREPOSITIONS: &[&str] = &[
    "across", "around", "from", "in", "inside", "into", "near", "outside", "throughout", "toward",
    "towards",
];

/// Words after which a bare four-digit number is read as a year.
pub(super) const YEAR_PREPOSITIONS: &[&str] = &[
    "after", "and", "around", "before", "between", "by", "circa", "during", "early", "from", "in",
    "late", "mid", "of", "since", "through", "till", "to", "until",
];

/// Prepositions and particles kept at the end of predicates ("works at", "signed up for").
pub(super) const PARTICLES: &[&str] = &[
    "about", "across", "after", "against", "along", "around", "as", "at", "before", "behind", "by",
    "down", "for", "from", "in", "into", "near", "of", "off", "on", "onto", "out", "over",
    "through", "to", "toward", "towards", "under", "up", "upon", "via", "with", "without",
];

/// Prepositions after which a previous verb carries over to a new object ("moved from X to Y").
pub(super) const CARRY_PREPOSITIONS: &[&str] = &[
    "from", "into", "onto", "to", "with",
];

/// Abbreviations (without the final period) after which a period never ends a sentence.
pub(super) const ABBREVIATIONS_STRONG: &[&str] = &[
    "a.k.a", "al", "approx", "apr", "aug", "ca", "capt", "cf", "col", "dec", "dept", "dr", "e.g",
    "ed", "eds", "est", "feb", "fig", "ft", "gen", "gov", "i.e", "jan", "jr", "jul", "jun", "lt",
    "mar", "mr", "mrs", "ms", "mt", "mx", "no", "nos", "nov", "oct", "ph.d", "prof", "rev", "sep",
    "sept", "sgt", "sr", "st", "vol", "vs",
];

/// Abbreviations after which a period ends a sentence only when a clear sentence opener follows ("... Inc. The deal ...").
pub(super) const ABBREVIATIONS_WEAK: &[&str] = &[
    "a.m", "am", "co", "corp", "etc", "inc", "llc", "ltd", "p.m", "plc", "pm", "u.k", "u.s",
    "u.s.a",
];

/// Every plain list, for the sortedness test.
#[cfg(test)]
const ALL_LISTS: &[(&str, &[&str])] = &[
    ("STOPWORDS", STOPWORDS),
    ("COMMON_CAPS", COMMON_CAPS),
    ("HONORIFICS", HONORIFICS),
    ("ROLES", ROLES),
    ("GIVEN_NAMES", GIVEN_NAMES),
    ("PLACES", PLACES),
    ("KNOWN_ORGS", KNOWN_ORGS),
    ("TECH", TECH),
    ("LOWERCASE_TECH", LOWERCASE_TECH),
    ("ORG_WORDS", ORG_WORDS),
    ("CORP_SUFFIXES", CORP_SUFFIXES),
    ("PLACE_SUFFIXES", PLACE_SUFFIXES),
    ("PLACE_PREFIXES", PLACE_PREFIXES),
    ("CONNECTORS", CONNECTORS),
    ("DEMONYMS", DEMONYMS),
    ("UNITS", UNITS),
    ("DURATION_UNITS", DURATION_UNITS),
    ("VERBS", VERBS),
    ("IRREGULAR_VERBS", IRREGULAR_VERBS),
    ("COPULAS", COPULAS),
    ("AUXILIARIES", AUXILIARIES),
    ("NEGATED_AUXILIARIES", NEGATED_AUXILIARIES),
    ("ADVERBS", ADVERBS),
    ("LY_NOT_ADVERBS", LY_NOT_ADVERBS),
    ("CLAUSE_BREAKS", CLAUSE_BREAKS),
    ("SPEECH_VERBS", SPEECH_VERBS),
    ("DETERMINERS", DETERMINERS),
    ("ADJ_DROP", ADJ_DROP),
    ("GENERIC_NOUNS", GENERIC_NOUNS),
    ("ACRONYM_STOP", ACRONYM_STOP),
    ("WORK_CUES", WORK_CUES),
    ("PLACE_PREPOSITIONS", PLACE_PREPOSITIONS),
    ("YEAR_PREPOSITIONS", YEAR_PREPOSITIONS),
    ("PARTICLES", PARTICLES),
    ("CARRY_PREPOSITIONS", CARRY_PREPOSITIONS),
    ("ABBREVIATIONS_STRONG", ABBREVIATIONS_STRONG),
    ("ABBREVIATIONS_WEAK", ABBREVIATIONS_WEAK),
];

/// Month names and abbreviations with their month number.
pub(super) const MONTHS: &[(&str, u8)] = &[
    ("apr", 4),
    ("april", 4),
    ("aug", 8),
    ("august", 8),
    ("dec", 12),
    ("december", 12),
    ("feb", 2),
    ("february", 2),
    ("jan", 1),
    ("january", 1),
    ("jul", 7),
    ("july", 7),
    ("jun", 6),
    ("june", 6),
    ("mar", 3),
    ("march", 3),
    ("may", 5),
    ("nov", 11),
    ("november", 11),
    ("oct", 10),
    ("october", 10),
    ("sep", 9),
    ("sept", 9),
    ("september", 9),
];

/// Weekday names (the value is unused but keeps the table shape uniform).
pub(super) const WEEKDAYS: &[(&str, u8)] = &[
    ("friday", 5),
    ("monday", 1),
    ("saturday", 6),
    ("sunday", 7),
    ("thursday", 4),
    ("tuesday", 2),
    ("wednesday", 3),
];

/// Spelled-out small numbers accepted before duration units ("two years").
pub(super) const NUMBER_WORDS: &[(&str, u32)] = &[
    ("a", 1),
    ("an", 1),
    ("couple", 2),
    ("eight", 8),
    ("eighteen", 18),
    ("eleven", 11),
    ("few", 3),
    ("fifteen", 15),
    ("fifty", 50),
    ("five", 5),
    ("forty", 40),
    ("four", 4),
    ("fourteen", 14),
    ("hundred", 100),
    ("nine", 9),
    ("nineteen", 19),
    ("one", 1),
    ("several", 3),
    ("seven", 7),
    ("seventeen", 17),
    ("six", 6),
    ("sixteen", 16),
    ("ten", 10),
    ("thirteen", 13),
    ("thirty", 30),
    ("three", 3),
    ("twelve", 12),
    ("twenty", 20),
    ("two", 2),
];

/// Words naming a relative period after "last"/"next"/"this".
pub(super) const RELATIVE_PERIODS: &[&str] = &[
    "autumn", "evening", "fall", "month", "morning", "night", "quarter", "spring", "summer",
    "week", "weekend", "winter", "year",
];

/// Words for multiples after a money amount ("$30 million").
pub(super) const MULTIPLIERS: &[&str] = &["b", "bn", "billion", "k", "m", "million", "thousand", "trillion"];

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_sorted_lowercase(name: &str, list: &[&str]) {
        for pair in list.windows(2) {
            assert!(pair[0] < pair[1], "{name} not sorted/unique at {:?}", pair);
        }
        for w in list {
            assert!(
                w.chars().all(|c| fold(c) == c),
                "{name} entry {w:?} is not lowercase"
            );
        }
    }

    #[test]
    fn every_list_is_sorted_and_lowercase() {
        for (name, list) in ALL_LISTS {
            assert_sorted_lowercase(name, list);
        }
        let keys = |t: &[(&str, u8)]| t.iter().map(|(k, _)| *k).collect::<Vec<_>>();
        assert_sorted_lowercase("MONTHS", &keys(MONTHS));
        assert_sorted_lowercase("WEEKDAYS", &keys(WEEKDAYS));
        let words: Vec<&str> = NUMBER_WORDS.iter().map(|(k, _)| *k).collect();
        assert_sorted_lowercase("NUMBER_WORDS", &words);
        assert_sorted_lowercase("RELATIVE_PERIODS", RELATIVE_PERIODS);
        assert_sorted_lowercase("MULTIPLIERS", MULTIPLIERS);
    }

    #[test]
    fn lookups_fold_case_and_apostrophes() {
        assert!(contains(STOPWORDS, "The"));
        assert!(contains(STOPWORDS, "DON\u{2019}T"));
        assert!(!contains(STOPWORDS, "Acme"));
        assert_eq!(lookup(MONTHS, "May"), Some(5));
        assert_eq!(lookup(MONTHS, "Maybe"), None);
    }
}

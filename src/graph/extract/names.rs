//! Small gazetteers and name cues: given names, places, well-known
//! organizations and products, honorifics, roles, name suffixes.
//!
//! Owns data only; lookups go through `lexicon`. Must never: grow into a
//! full gazetteer (a few hundred entries each; the rules, not the lists,
//! should do the work) or hold entries that are not lowercase (tests
//! enforce sorted, lowercase lists). Edit by hand; keep each list sorted.

use super::lexicon::Lex;

/// Titles that precede a person's name; stripped from the name span and a strong Person cue.
#[rustfmt::skip]
pub(super) const HONORIFICS: Lex = Lex {
    bit: 2,
    words: &[
        "aunt", "capt", "captain", "chancellor", "coach", "col", "colonel", "dame", "detective",
        "dr", "father", "frau", "gen", "general", "gov", "governor", "grandma", "grandpa", "herr",
        "judge", "justice", "king", "lady", "lieutenant", "lord", "lt", "madam", "madame", "mayor",
        "minister", "miss", "monsieur", "mr", "mrs", "ms", "mx", "officer", "pope", "president",
        "prince", "princess", "prof", "professor", "queen", "rep", "rev", "reverend", "sen",
        "senator", "sergeant", "sgt", "sir", "uncle",
    ],
};

/// Role nouns used in "X, the ROLE of Y" / "Y's ROLE X" patterns; role acronyms (CEO) are not entities on their own.
#[rustfmt::skip]
pub(super) const ROLES: Lex = Lex {
    bit: 3,
    words: &[
        "adviser", "advisor", "analyst", "architect", "author", "boss", "brother", "capital",
        "captain", "ceo", "cfo", "chair", "chairman", "chairwoman", "chief", "cio", "ciso", "cmo",
        "co-founder", "coach", "cofounder", "colleague", "consultant", "coo", "cousin", "cpo",
        "creator", "cto", "daughter", "dean", "designer", "developer", "director", "division",
        "editor", "employee", "engineer", "evp", "father", "founder", "friend", "governor", "head",
        "husband", "intern", "lead", "maintainer", "manager", "mayor", "member", "mentor",
        "minister", "mother", "neighbor", "neighbour", "officer", "owner", "partner", "president",
        "principal", "professor", "researcher", "scientist", "secretary", "sister", "son",
        "spokesman", "spokesperson", "spokeswoman", "student", "subsidiary", "svp", "unit", "vp",
        "wife",
    ],
};

/// Common given names (a small, deliberately international sample). A first token found here is a Person cue.
#[rustfmt::skip]
pub(super) const GIVEN_NAMES: Lex = Lex {
    bit: 4,
    words: &[
        "aaron", "abigail", "adam", "adrian", "ahmed", "aisha", "alan", "albert", "alex",
        "alexander", "alexandra", "alice", "alicia", "amanda", "amara", "amelia", "amir", "amy",
        "ana", "andrea", "andrew", "angela", "anna", "anne", "anthony", "antonio", "arjun",
        "arthur", "ava", "barbara", "ben", "benjamin", "beth", "bill", "bob", "brandon", "brian",
        "bruce", "carl", "carlos", "carmen", "caroline", "catherine", "charles", "charlie",
        "charlotte", "chen", "chinedu", "chloe", "chris", "christina", "christopher", "claire",
        "daniel", "david", "deborah", "dennis", "diana", "diego", "dmitri", "donald", "dorothy",
        "edward", "elena", "eli", "elizabeth", "ella", "emily", "emma", "eric", "ethan", "eva",
        "evan", "fatima", "fatou", "felix", "fernando", "francois", "frank", "gabriel", "gary",
        "george", "gina", "giulia", "grace", "hannah", "hans", "harry", "haruto", "helen", "henry",
        "hiroshi", "hugo", "ian", "isaac", "isabel", "isabella", "ivan", "jack", "jacob", "james",
        "jane", "janet", "jason", "jean", "jeff", "jennifer", "jessica", "jim", "jin", "joan",
        "joe", "john", "jon", "jonathan", "jorge", "jose", "joseph", "joshua", "juan", "julia",
        "julie", "jurgen", "justin", "karen", "kate", "katherine", "kevin", "kim", "klaus",
        "kwame", "larry", "laura", "lauren", "leo", "li", "liam", "linda", "lisa", "luca", "lucas",
        "lucy", "luis", "lukas", "marco", "maria", "marie", "mark", "martin", "mary", "matthew",
        "maya", "megan", "melanie", "mia", "michael", "michelle", "mike", "min", "mohammed",
        "muhammad", "nancy", "natalie", "natasha", "nathan", "ngozi", "nicole", "nina", "noah",
        "olga", "olivia", "omar", "oscar", "pablo", "patricia", "paul", "peter", "pierre", "priya",
        "rachel", "rahul", "raj", "ravi", "rebecca", "richard", "robert", "ruth", "ryan", "sakura",
        "sam", "samantha", "samuel", "sandra", "sara", "sarah", "scott", "sean", "sergei", "sofia",
        "sophia", "sophie", "stephen", "steve", "steven", "susan", "thomas", "tim", "timothy",
        "tom", "tony", "victor", "victoria", "vincent", "walter", "wei", "william", "yuki", "yuto",
        "zoe",
    ],
};

/// Countries, regions and major cities. A whole-span match is a strong Place cue.
#[rustfmt::skip]
pub(super) const PLACES: Lex = Lex {
    bit: 5,
    words: &[
        "afghanistan", "africa", "alabama", "alaska", "albania", "algeria", "amsterdam", "andorra",
        "angola", "antarctica", "argentina", "arizona", "arkansas", "armenia", "asia", "athens",
        "atlanta", "auckland", "austin", "australia", "austria", "azerbaijan", "baghdad",
        "bahamas", "bahrain", "bangalore", "bangkok", "bangladesh", "barcelona", "bay area",
        "beijing", "belarus", "belgium", "belgrade", "berlin", "bern", "bogota", "bolivia",
        "bombay", "bosnia", "boston", "brazil", "brisbane", "brussels", "bucharest", "budapest",
        "buenos aires", "bulgaria", "cairo", "calcutta", "california", "cambodia", "cameroon",
        "canada", "canberra", "cape town", "caracas", "chennai", "chicago", "chile", "china",
        "cologne", "colombia", "colorado", "connecticut", "copenhagen", "croatia", "cuba",
        "cyprus", "czechia", "dallas", "dc", "delaware", "delhi", "denmark", "denver", "detroit",
        "dhaka", "dubai", "dublin", "east coast", "ecuador", "edinburgh", "egypt", "england",
        "estonia", "ethiopia", "europe", "finland", "florence", "florida", "france", "frankfurt",
        "geneva", "georgia", "germany", "ghana", "glasgow", "greece", "guatemala", "haiti",
        "hamburg", "hanoi", "havana", "hawaii", "helsinki", "hong kong", "honolulu", "houston",
        "hungary", "iceland", "idaho", "illinois", "india", "indiana", "indonesia", "iowa", "iran",
        "iraq", "ireland", "israel", "istanbul", "italy", "jakarta", "jamaica", "japan",
        "jerusalem", "jordan", "kansas", "karachi", "kazakhstan", "kentucky", "kenya", "kiev",
        "korea", "kosovo", "kuwait", "kyiv", "kyoto", "lagos", "laos", "latin america", "latvia",
        "lebanon", "libya", "lisbon", "lithuania", "liverpool", "london", "los angeles",
        "louisiana", "luxembourg", "lyon", "madrid", "maine", "malaysia", "manchester", "manila",
        "maryland", "massachusetts", "melbourne", "mexico", "mexico city", "miami", "michigan",
        "middle east", "milan", "minnesota", "mississippi", "missouri", "monaco", "mongolia",
        "montana", "montenegro", "montreal", "morocco", "moscow", "mumbai", "munich", "myanmar",
        "nairobi", "naples", "nebraska", "nepal", "netherlands", "nevada", "new delhi",
        "new hampshire", "new jersey", "new mexico", "new york", "new york city", "new zealand",
        "nicaragua", "nigeria", "north america", "north carolina", "north korea", "norway", "nyc",
        "oakland", "ohio", "oklahoma", "oman", "ontario", "oregon", "osaka", "oslo", "ottawa",
        "pakistan", "palestine", "panama", "paraguay", "paris", "pennsylvania", "perth", "peru",
        "philadelphia", "philippines", "phoenix", "poland", "portland", "portugal", "prague",
        "puerto rico", "qatar", "quebec", "rhode island", "riga", "rio de janeiro", "romania",
        "rome", "russia", "rwanda", "san diego", "san francisco", "san jose", "santiago",
        "sao paulo", "saudi arabia", "scotland", "seattle", "senegal", "seoul", "serbia", "sf",
        "shanghai", "shenzhen", "silicon valley", "singapore", "slovakia", "slovenia", "somalia",
        "south africa", "south america", "south carolina", "south korea", "spain", "sri lanka",
        "stockholm", "sudan", "sweden", "switzerland", "sydney", "syria", "taipei", "taiwan",
        "tallinn", "tanzania", "tehran", "tel aviv", "tennessee", "texas", "thailand", "tokyo",
        "toronto", "tunisia", "turkey", "u.k", "u.s", "u.s.a", "uae", "uganda", "uk", "ukraine",
        "united kingdom", "united states", "uruguay", "us", "usa", "utah", "uzbekistan",
        "vancouver", "venezuela", "venice", "vermont", "victoria", "vienna", "vietnam", "virginia",
        "wales", "warsaw", "washington", "wellington", "west coast", "wisconsin", "wyoming",
        "yemen", "zambia", "zimbabwe", "zurich",
    ],
};

/// Well-known organizations, including acronyms and CamelCase brands that would otherwise look like artifacts.
#[rustfmt::skip]
pub(super) const KNOWN_ORGS: Lex = Lex {
    bit: 6,
    words: &[
        "acm", "adobe", "airbnb", "alibaba", "amazon", "amd", "anthropic", "apple", "baidu", "bbc",
        "bmw", "boeing", "cdc", "cern", "cia", "cisco", "cnn", "deepmind", "dell", "disney",
        "dropbox", "ebay", "ecb", "epa", "esa", "eu", "facebook", "fbi", "fda", "fifa", "ford",
        "github", "gitlab", "google", "hsbc", "huawei", "ibm", "ieee", "ietf", "ikea", "imf",
        "intel", "interpol", "linkedin", "meta", "microsoft", "mit", "mozilla", "nasa", "nato",
        "nba", "netflix", "nfl", "nhs", "nih", "noaa", "nsa", "nsf", "nvidia", "oecd", "opec",
        "openai", "oracle", "paypal", "pfizer", "reuters", "salesforce", "samsung", "shopify",
        "siemens", "slack", "sony", "spacex", "spotify", "stanford", "stripe", "tesla", "toyota",
        "tsmc", "twitter", "uber", "ucla", "un", "unesco", "unicef", "visa", "volkswagen", "w3c",
        "walmart", "who", "wikipedia", "wto", "yahoo", "youtube", "zoom",
    ],
};

/// Well-known software, languages, platforms and hardware product names (Artifact cue). Includes a few lowercase tool names that are detected even without capitalization.
#[rustfmt::skip]
pub(super) const TECH: Lex = Lex {
    bit: 7,
    words: &[
        "android", "angular", "ansible", "api", "apis", "arduino", "aws", "azure", "bash", "c++",
        "cargo", "chrome", "chromium", "clang", "cli", "clojure", "cobol", "confluence", "cpu",
        "css", "csv", "curl", "dart", "debian", "deno", "django", "dns", "docker", "duckdb",
        "elasticsearch", "elixir", "emacs", "erlang", "excel", "fastapi", "figma", "firefox",
        "flask", "fortran", "gcc", "gcp", "git", "gpu", "graphql", "grpc", "haskell", "html",
        "http", "https", "ide", "ios", "ipad", "iphone", "java", "javascript", "jenkins", "jira",
        "jquery", "json", "julia", "jupyter", "jvm", "k8s", "kafka", "keras", "kotlin",
        "kubernetes", "linear", "linux", "llm", "llvm", "lua", "macos", "matlab", "mcp", "mongodb",
        "mysql", "nginx", "node", "nodejs", "notion", "npm", "numpy", "oauth", "ocaml", "pandas",
        "perl", "php", "pip", "postgres", "postgresql", "postman", "powershell", "python",
        "pytorch", "rabbitmq", "rag", "ram", "react", "redis", "ruby", "rust", "rustc", "s3",
        "scala", "scipy", "sdk", "serde", "slack", "sql", "sqlite", "ssd", "ssh", "svelte",
        "swift", "tcp", "tensorflow", "terraform", "tls", "tokio", "toml", "tpu", "typescript",
        "ubuntu", "udp", "unix", "usb", "vim", "vscode", "vue", "wasm", "webassembly", "windows",
        "xml", "yaml", "zig",
    ],
};

/// Tool and library names that are conventionally written in lowercase and are safe to detect as Artifacts anyway.
#[rustfmt::skip]
pub(super) const LOWERCASE_TECH: Lex = Lex {
    bit: 8,
    words: &[
        "cargo", "curl", "docker", "git", "kubectl", "nginx", "npm", "numpy", "pandas", "pip",
        "pytorch", "redis", "rustc", "scipy", "serde", "sqlite", "tokio", "vim",
    ],
};

/// Words that make a capitalized span an Organization wherever they occur in it ("Stanford University", "University of Paris").
#[rustfmt::skip]
pub(super) const ORG_WORDS: Lex = Lex {
    bit: 9,
    words: &[
        "academy", "agency", "airlines", "alliance", "army", "association", "authority", "bank",
        "bureau", "capital", "center", "centre", "church", "club", "co", "college", "commission",
        "committee", "company", "corp", "corporation", "council", "court", "department",
        "electronics", "exchange", "federation", "foundation", "gmbh", "group", "holdings",
        "hospital", "inc", "incorporated", "industries", "institute", "institution", "lab",
        "laboratories", "laboratory", "labs", "library", "limited", "llc", "ltd", "media",
        "ministry", "motors", "museum", "navy", "networks", "organisation", "organization",
        "partners", "party", "pharmaceuticals", "plc", "police", "records", "school", "society",
        "software", "solutions", "studios", "systems", "technologies", "technology", "trust",
        "union", "university", "ventures",
    ],
};

/// Legal-form suffixes stripped from organization keys so that "Acme Corp." = "Acme Corporation" = "Acme".
#[rustfmt::skip]
pub(super) const CORP_SUFFIXES: Lex = Lex {
    bit: 10,
    words: &[
        "ab", "ag", "bv", "co", "company", "corp", "corporation", "gmbh", "inc", "incorporated",
        "limited", "llc", "ltd", "nv", "oy", "plc", "pty", "s.a", "sa",
    ],
};

/// Final words that make a capitalized span a Place ("Danube River", "Main Street").
#[rustfmt::skip]
pub(super) const PLACE_SUFFIXES: Lex = Lex {
    bit: 11,
    words: &[
        "airport", "ave", "avenue", "bay", "beach", "blvd", "boulevard", "bridge", "canyon",
        "city", "coast", "county", "creek", "delta", "desert", "district", "falls", "forest",
        "glacier", "gulf", "harbor", "harbour", "heights", "highway", "hill", "hills", "island",
        "islands", "lake", "lakes", "lane", "ln", "mountain", "mountains", "ocean", "park",
        "peninsula", "plains", "plateau", "province", "rd", "region", "river", "road", "sea",
        "springs", "square", "st", "state", "station", "strait", "street", "town", "valley",
        "village",
    ],
};

/// First words that make a multi-word capitalized span a Place ("Mount Everest", "Lake Tahoe").
#[rustfmt::skip]
pub(super) const PLACE_PREFIXES: Lex = Lex {
    bit: 12,
    words: &[
        "cape", "east", "fort", "isle", "lake", "las", "los", "mount", "mt", "new", "north",
        "port", "san", "santa", "sao", "south", "west",
    ],
};

/// Capitalized adjectives of nationality or creed; they modify concepts ("an English mathematician") rather than name entities.
#[rustfmt::skip]
pub(super) const DEMONYMS: Lex = Lex {
    bit: 14,
    words: &[
        "african", "american", "arab", "arabic", "argentine", "asian", "australian", "austrian",
        "belgian", "brazilian", "british", "buddhist", "canadian", "catholic", "chilean",
        "chinese", "christian", "colombian", "cuban", "czech", "danish", "dutch", "eastern",
        "egyptian", "english", "european", "filipino", "finnish", "french", "german", "greek",
        "hindu", "hungarian", "indian", "indonesian", "iranian", "irish", "israeli", "italian",
        "jamaican", "japanese", "jewish", "kenyan", "korean", "latino", "mexican", "muslim",
        "nigerian", "northern", "norwegian", "pakistani", "persian", "peruvian", "polish",
        "portuguese", "russian", "scandinavian", "scottish", "southern", "spanish", "swedish",
        "swiss", "thai", "turkish", "ukrainian", "vietnamese", "welsh", "western",
    ],
};

/// All-caps tokens that are chat or business shorthand rather than entities.
#[rustfmt::skip]
pub(super) const ACRONYM_STOP: Lex = Lex {
    bit: 29,
    words: &[
        "afaik", "aka", "am", "asap", "btw", "cc", "diy", "eod", "eow", "eta", "faq", "fyi",
        "iirc", "imho", "imo", "lgtm", "lol", "nb", "nit", "ok", "omg", "pm", "ps", "ptal", "re",
        "rsvp", "tba", "tbd", "tldr", "todo", "wip",
    ],
};

/// Words that, right before "at"/"for"/"with", make the following name an Organization ("works at X").
#[rustfmt::skip]
pub(super) const WORK_CUES: Lex = Lex {
    bit: 30,
    words: &[
        "employed", "engineer", "hired", "intern", "interned", "interning", "job", "join",
        "joined", "joining", "joins", "student", "students", "studied", "study", "studying",
        "work", "worked", "working", "works",
    ],
};

/// Family and social roles written right before a name ("my daughter Rosa", "coach Dana"): a Person cue.
#[rustfmt::skip]
pub(super) const KIN: Lex = Lex {
    bit: 34,
    words: &[
        "aunt", "boss", "boyfriend", "brother", "coach", "colleague", "cousin", "dad", "daughter",
        "doctor", "father", "friend", "girlfriend", "grandma", "grandpa", "husband", "mentor",
        "mom", "mother", "neighbor", "neighbour", "nephew", "niece", "partner", "roommate",
        "sister", "son", "teacher", "uncle", "wife",
    ],
};

/// Roles only organizations have: "the CTO of X", "X's CEO" make X an Organization.
#[rustfmt::skip]
pub(super) const ORG_ROLES: Lex = Lex {
    bit: 42,
    words: &[
        "board", "ceo", "cfo", "chairman", "chairwoman", "cio", "cmo", "co-founder", "cofounder",
        "coo", "cto", "employees", "founder", "headquarters", "shareholders", "shares",
        "spokesman", "spokesperson", "spokeswoman", "stock", "subsidiary", "vp",
    ],
};

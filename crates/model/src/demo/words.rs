//! The vocabularies the demo generators draw from. All made up for spanprof; none needs JSON escaping.

/// Given names: (as written, folded to lowercase ASCII for e-mail addresses).
pub(super) const FIRST_NAMES: [(&str, &str); 24] = [
    ("Amara", "amara"),
    ("Bruno", "bruno"),
    ("Chen", "chen"),
    ("Dmitri", "dmitri"),
    ("Élodie", "elodie"),
    ("Farah", "farah"),
    ("Görkem", "gorkem"),
    ("Hiroshi", "hiroshi"),
    ("Ingrid", "ingrid"),
    ("Jonas", "jonas"),
    ("Kwame", "kwame"),
    ("Lucía", "lucia"),
    ("Mateo", "mateo"),
    ("Nadia", "nadia"),
    ("Oskar", "oskar"),
    ("Priya", "priya"),
    ("Quentin", "quentin"),
    ("Rafael", "rafael"),
    ("Sigrún", "sigrun"),
    ("Tomás", "tomas"),
    ("Ursula", "ursula"),
    ("Wanjiru", "wanjiru"),
    ("Yuki", "yuki"),
    ("Zoë", "zoe"),
];

/// Family names: (as written, folded to lowercase ASCII for e-mail addresses).
pub(super) const LAST_NAMES: [(&str, &str); 22] = [
    ("Andersen", "andersen"),
    ("Brennan", "brennan"),
    ("Castillo", "castillo"),
    ("Dąbrowski", "dabrowski"),
    ("Eriksson", "eriksson"),
    ("Fernández", "fernandez"),
    ("García", "garcia"),
    ("Haddad", "haddad"),
    ("Ivanova", "ivanova"),
    ("Johansson", "johansson"),
    ("Kim", "kim"),
    ("Laurent", "laurent"),
    ("Moreau", "moreau"),
    ("Nakamura", "nakamura"),
    ("Okafor", "okafor"),
    ("Petrović", "petrovic"),
    ("Rahman", "rahman"),
    ("Schäfer", "schafer"),
    ("Tanaka", "tanaka"),
    ("Van Dijk", "vandijk"),
    ("Weiß", "weiss"),
    ("Yilmaz", "yilmaz"),
];

/// E-mail domains.
pub(super) const DOMAINS: [&str; 4] = [
    "corp.example.org",
    "example.com",
    "mail.example.net",
    "staff.example.org",
];

/// ISO 3166-1 alpha-2 country codes.
pub(super) const COUNTRIES: [&str; 24] = [
    "AR", "AU", "BR", "CA", "CL", "CN", "DE", "EG", "ES", "FR", "GB", "ID", "IN", "IT", "JP", "KE",
    "KR", "MX", "NG", "NL", "PL", "SE", "US", "ZA",
];

/// Elements of `Tags`, a few of them non-ASCII.
pub(super) const TAGS: [&str; 17] = [
    "alpha",
    "api",
    "beta-tester",
    "churn-risk",
    "desktop",
    "early-bird",
    "enterprise",
    "legacy",
    "mobile",
    "newsletter",
    "partner",
    "priority",
    "referral",
    "trial",
    "vip",
    "über",
    "東京",
];

/// The keys of `Attrs`, in sorted order (the JSON is written with sorted keys).
pub(super) const ATTR_KEYS: [&str; 10] = [
    "color",
    "dark_mode",
    "device",
    "limits",
    "locale",
    "plan",
    "quota",
    "region",
    "seats",
    "trial",
];

/// String values inside `Attrs`.
pub(super) const ATTR_WORDS: [&str; 10] = [
    "basic",
    "pro",
    "team",
    "enterprise",
    "teal",
    "amber",
    "tablet",
    "grün",
    "日本",
    "ok",
];

/// Most of the words of `Notes`: lorem-ipsum-like Latin.
pub(super) const NOTE_WORDS: [&str; 64] = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
    "duis",
    "aute",
    "irure",
    "in",
    "reprehenderit",
    "voluptate",
    "velit",
    "esse",
    "cillum",
    "fugiat",
    "nulla",
    "pariatur",
    "excepteur",
    "sint",
    "occaecat",
    "cupidatat",
    "non",
    "proident",
    "sunt",
    "culpa",
    "qui",
    "officia",
    "deserunt",
    "mollit",
    "anim",
    "id",
    "est",
    "laborum",
    "porta",
    "vitae",
];

/// The other words of `Notes`: 2-, 3- and 4-byte UTF-8 (`🚀`, `🎉` and `𝄞` are outside the BMP).
pub(super) const NOTE_SPICE: [&str; 14] = [
    "données", "naïve", "Straße", "Ωmega", "北京", "東京", "café", "señor", "Ärger", "€uro", "🚀",
    "🎉", "𝄞", "Δelta",
];

/// Values of `Category`.
pub(super) const CATEGORIES: [&str; 14] = [
    "agriculture",
    "automotive",
    "education",
    "energy",
    "finance",
    "gaming",
    "healthcare",
    "hospitality",
    "logistics",
    "media",
    "nonprofit",
    "retail",
    "telecom",
    "travel",
];

/// Values of `Region`: Cloud Spanner region names.
pub(super) const REGIONS: [&str; 13] = [
    "asia-east1",
    "asia-northeast1",
    "asia-south1",
    "australia-southeast1",
    "europe-north1",
    "europe-west1",
    "europe-west4",
    "me-central1",
    "northamerica-northeast1",
    "southamerica-east1",
    "us-central1",
    "us-east4",
    "us-west1",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(word: &str) -> bool {
        !word.is_empty()
            && !word
                .chars()
                .any(|c| c == '"' || c == '\\' || c.is_control())
    }

    #[test]
    fn words_need_no_json_escaping_and_emails_are_ascii() {
        let lists: [&[&str]; 9] = [
            &DOMAINS,
            &COUNTRIES,
            &TAGS,
            &ATTR_KEYS,
            &ATTR_WORDS,
            &NOTE_WORDS,
            &NOTE_SPICE,
            &CATEGORIES,
            &REGIONS,
        ];
        for word in lists.iter().flat_map(|l| l.iter()) {
            assert!(plain(word), "{word:?}");
        }
        for (name, folded) in FIRST_NAMES.iter().chain(&LAST_NAMES) {
            assert!(plain(name), "{name:?}");
            assert!(folded.bytes().all(|b| b.is_ascii_lowercase()), "{folded:?}");
        }
        assert!(COUNTRIES.iter().all(|c| c.len() == 2));
        assert!(ATTR_KEYS.is_sorted(), "Attrs keys must be sorted");
        assert!(NOTE_WORDS.iter().all(|w| w.is_ascii() && !w.contains(' ')));
        assert!(NOTE_SPICE.iter().all(|w| !w.is_ascii() && !w.contains(' ')));
    }
}

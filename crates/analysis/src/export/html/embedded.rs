//! Reading back the JSON report a page of spanprof's embeds. spanprof writes it in one place: a
//! `<script type="application/json">` right after the page's footer, followed only by the page's
//! script and its end. A report found anywhere else (inside a comment, in a tag's attribute, in
//! another element's text, twice) is not the one a browser shows with the page, so it is refused
//! rather than read: what spanprof reads of a file is what a person opening it sees.

use crate::export::ExportError;

/// The embedded run report's element id.
pub(super) const REPORT_ID: &str = "spanprof-report";
/// The embedded load report's element id.
pub(super) const LOAD_ID: &str = "spanprof-load-report";

/// Elements whose text is not markup: a tag spelled inside one is text.
const RAW_TEXT: [&[u8]; 10] = [
    b"script",
    b"style",
    b"title",
    b"textarea",
    b"xmp",
    b"iframe",
    b"noembed",
    b"noframes",
    b"noscript",
    b"plaintext",
];

/// The JSON report an HTML report of spanprof's embeds; an error naming what the file is when it
/// embeds none (or a load report's), or embeds one anywhere but where spanprof writes it.
pub fn read_embedded(bytes: &[u8]) -> Result<&[u8], ExportError> {
    if let Some(json) = embedded(bytes, REPORT_ID)? {
        return Ok(json);
    }
    if embedded(bytes, LOAD_ID)?.is_some() {
        return Err(ExportError::NotARunReport(
            "it is a load run's HTML report (its steps, not a run's iterations)".into(),
        ));
    }
    Err(ExportError::NotARunReport(
        "an HTML file without a spanprof report in it".into(),
    ))
}

/// The load report a load run's HTML report embeds.
pub fn read_embedded_load(bytes: &[u8]) -> Result<&[u8], ExportError> {
    embedded(bytes, LOAD_ID)?
        .ok_or_else(|| ExportError::NotARunReport("no load run's report in it".into()))
}

/// The JSON of the element `id`, if the page has one: `None` when it has none, an error when it
/// has one anywhere but the one place spanprof writes it, or one that does not end.
fn embedded<'a>(bytes: &'a [u8], id: &str) -> Result<Option<&'a [u8]>, ExportError> {
    let refuse = |why: &str| Err(ExportError::NotARunReport(why.to_owned()));
    let open = format!("<script type=\"application/json\" id=\"{id}\">");
    let Some(at) = find_bytes(bytes, open.as_bytes()) else {
        return Ok(None);
    };
    let start = at + open.len();
    if find_bytes(&bytes[start..], open.as_bytes()).is_some() {
        return refuse("it embeds a report twice, which spanprof never writes");
    }
    if !bytes[..at].ends_with(b"</footer>") || !opens_a_tag_at(bytes, at) {
        return refuse(
            "its report is not where spanprof writes it (after the page's footer, outside any \
             comment or other element)",
        );
    }
    let Some(len) = find_bytes(&bytes[start..], b"</script>") else {
        return refuse("its report does not end");
    };
    let rest = &bytes[start + len + b"</script>".len()..];
    let rest = rest.trim_ascii_end();
    if !rest.starts_with(b"<script>") || !rest.ends_with(b"</script></body></html>") {
        return refuse("its report is not followed by the page's end, as spanprof writes it");
    }
    Ok(Some(&bytes[start..start + len]))
}

/// Whether a tag at `at` would be read as one by a browser: `at` is not inside a comment, a tag
/// (an attribute's value), or the text of an element whose text is not markup.
fn opens_a_tag_at(bytes: &[u8], at: usize) -> bool {
    let mut i = 0;
    while i < at {
        let rest = &bytes[i..];
        i = if rest.starts_with(b"<!--") {
            // `<!-->` and `<!--->` end where they begin.
            match find_bytes(&rest[2..], b"-->") {
                Some(end) => i + 2 + end + 3,
                None => return false,
            }
        } else if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
            match rest.iter().position(|&b| b == b'>') {
                Some(end) => i + end + 1,
                None => return false,
            }
        } else if rest.len() > 1
            && rest[0] == b'<'
            && (rest[1].is_ascii_alphabetic() || rest[1] == b'/')
        {
            let Some(end) = tag_end(rest) else {
                return false;
            };
            match raw_text_name(rest) {
                Some(name) => match end_tag(&rest[end..], name) {
                    Some(close) => i + end + close,
                    None => return false,
                },
                None => i + end,
            }
        } else {
            i + 1
        };
    }
    i == at
}

/// Where the tag opening `tag` ends (past its `>`), its quoted attribute values skipped.
fn tag_end(tag: &[u8]) -> Option<usize> {
    let mut quote = None;
    for (i, &b) in tag.iter().enumerate().skip(1) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => return Some(i + 1),
            None => {}
        }
    }
    None
}

/// The name of the raw-text element `tag` opens, if it opens one.
fn raw_text_name(tag: &[u8]) -> Option<&'static [u8]> {
    let name: Vec<u8> = tag[1..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .map(u8::to_ascii_lowercase)
        .collect();
    RAW_TEXT.into_iter().find(|raw| **raw == *name)
}

/// Where the end tag of `name` begins in `text` (ASCII case ignored).
fn end_tag(text: &[u8], name: &[u8]) -> Option<usize> {
    let close: Vec<u8> = [b"</".as_slice(), name].concat();
    text.windows(close.len())
        .position(|w| w.eq_ignore_ascii_case(&close))
}

fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

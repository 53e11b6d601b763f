//! A model's search text to an FTS5 query that cannot be a syntax error.
//!
//! Plain words are the query language: every word becomes a quoted FTS5 string (its `"`
//! doubled), so `AND`, `NEAR(`, `col:`, `*`, `^`, `-` and unbalanced quotes are only text.
//! Two additions a model expects from a search box: `"several words"` is a phrase, and a
//! trailing `*` (`auth*`) matches words that start so. A word with no letter or digit
//! (`---`, `!=`) matches nothing the tokenizer keeps and is dropped.

/// The terms of a search: each an FTS5 string ready to join.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terms(Vec<String>);

impl Terms {
    /// Reads `text`; `None` when no term is left (empty, or only punctuation).
    pub fn parse(text: &str) -> Option<Terms> {
        let mut terms = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
            rest = &rest[start..];
            let (term, after) = match rest.strip_prefix('"') {
                // A phrase up to the next quote (or the end, for an unbalanced one).
                Some(inner) => match inner.find('"') {
                    Some(end) => (&inner[..end], &inner[end + 1..]),
                    None => (inner, ""),
                },
                None => {
                    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                    (&rest[..end], &rest[end..])
                }
            };
            rest = after;
            let (word, prefix) = match term.strip_suffix('*') {
                Some(word) => (word, true),
                None => (term, false),
            };
            if !word.chars().any(char::is_alphanumeric) {
                continue;
            }
            let quoted = format!("\"{}\"", word.replace('"', "\"\""));
            terms.push(if prefix { format!("{quoted}*") } else { quoted });
        }
        (!terms.is_empty()).then_some(Terms(terms))
    }

    /// Every term must match (FTS5's implicit AND).
    pub fn all(&self) -> String {
        self.0.join(" ")
    }

    /// Any term may match.
    pub fn any(&self) -> String {
        self.0.join(" OR ")
    }

    /// How many terms.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true for a parsed query (kept for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_phrases_and_prefixes() {
        let terms = Terms::parse(r#"  error  "connection reset" auth* "#).unwrap();
        assert_eq!(terms.all(), r#""error" "connection reset" "auth"*"#);
        assert_eq!(terms.any(), r#""error" OR "connection reset" OR "auth"*"#);
    }

    #[test]
    fn syntax_is_only_text() {
        let terms = Terms::parse(r#"a"b NEAR( col:x -y ^z AND "unbalanced more"#).unwrap();
        assert_eq!(
            terms.all(),
            r#""a""b" "NEAR(" "col:x" "-y" "^z" "AND" "unbalanced more""#,
            "an unbalanced quote runs to the end, as one phrase"
        );
        let terms = Terms::parse(r#"x"y" OR"#).unwrap();
        assert_eq!(terms.all(), r#""x""y""" "OR""#);
        assert_eq!(Terms::parse("  --- != ** \"\" "), None);
        assert_eq!(Terms::parse(""), None);
    }
}

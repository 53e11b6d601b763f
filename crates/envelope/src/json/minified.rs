//! Whether two JSON texts are the same text but for the white space between their tokens:
//! a text mirror written indented (the Python SDK writes `structuredContent`'s mirror with
//! an indent of 2) against the compact member it mirrors, compared without building either
//! and without decoding the mirror whole.
//!
//! Equal without their white space means equal as values: a valid text's tokens are what
//! is left, so two texts that keep the same bytes read to the same tokens, hence the same
//! value. White space is taken out only where JSON allows it, beside a structural
//! character (`{}[],:`): white space between two other characters (inside a number or a
//! literal, between two strings) makes the texts unequal, so that two texts found equal
//! are both valid JSON or both not.

/// Whether the string whose literal's text (between its quotes, valid JSON string text) is
/// `raw` decodes to a JSON text that is `json` but for the white space outside strings of
/// either. The literal is decoded a piece at a time.
pub(crate) fn decodes_to_minified(raw: &[u8], json: &[u8]) -> bool {
    const PIECE: usize = 1 << 20;
    let mut mirror = Tokens::default();
    let mut member = Tokens::default();
    let mut expected = json.iter().copied().filter(|&b| member.keeps(b));
    let mut compare = |piece: &str| {
        let mut bytes = piece.bytes().filter(|&b| mirror.keeps(b));
        match bytes.all(|b| expected.next() == Some(b)) {
            true => Ok(()),
            false => Err(()),
        }
    };
    if super::skim::decode_in_pieces(raw, PIECE, &mut compare, || ()).is_err() {
        return false;
    }
    expected.next().is_none() && !mirror.misplaced && !member.misplaced
}

/// Whether the JSON text `a` is the JSON text `b` but for the white space outside strings
/// of either.
pub(crate) fn same_minified(a: &[u8], b: &[u8]) -> bool {
    let (mut left, mut right) = (Tokens::default(), Tokens::default());
    let same = a
        .iter()
        .copied()
        .filter(|&c| left.keeps(c))
        .eq(b.iter().copied().filter(|&c| right.keeps(c)));
    same && !left.misplaced && !right.misplaced
}

/// Whether the JSON text `json` has white space between its tokens (outside its strings):
/// then it is not what any of our writers writes, all compact.
pub(crate) fn has_white_space(json: &[u8]) -> bool {
    let mut tokens = Tokens::default();
    json.iter().any(|&b| !tokens.keeps(b))
}

/// Where a walk through JSON text is: inside a string (after a backslash), or not; and
/// whether white space was taken out where JSON does not allow it.
#[derive(Default)]
struct Tokens {
    in_string: bool,
    escaped: bool,
    /// The last byte kept (0 before the first).
    last: u8,
    /// Whether white space was taken out since it.
    spaced: bool,
    /// Whether white space stood between two characters neither of which is structural.
    misplaced: bool,
}

impl Tokens {
    /// Whether the next byte `b` is kept: everything but white space outside strings.
    fn keeps(&mut self, b: u8) -> bool {
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            self.last = b;
            return true;
        }
        if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
            self.spaced = self.last != 0;
            return false;
        }
        let structural = |c: u8| matches!(c, b'{' | b'}' | b'[' | b']' | b',' | b':');
        if self.spaced && !structural(self.last) && !structural(b) {
            self.misplaced = true;
        }
        self.spaced = false;
        self.in_string = b == b'"';
        self.last = b;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The literal text of a JSON string holding `text`.
    fn literal(text: &str) -> Vec<u8> {
        let quoted = serde_json::to_vec(text).unwrap();
        quoted[1..quoted.len() - 1].to_vec()
    }

    proptest! {
        #[test]
        fn equal_without_white_space_means_equal_values(
            value in any_json(),
            spaces in prop::collection::vec(0usize..4, 0..64),
        ) {
            let compact = serde_json::to_string(&value).unwrap();
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            prop_assert!(same_minified(pretty.as_bytes(), compact.as_bytes()));
            prop_assert!(!has_white_space(compact.as_bytes()));
            prop_assert_eq!(has_white_space(pretty.as_bytes()), pretty != compact);
            prop_assert!(decodes_to_minified(&literal(&pretty), compact.as_bytes()));
            // Spaces put anywhere: when the texts still compare equal, both read to the
            // same value, or neither reads.
            let mut spaced = String::new();
            for (i, c) in compact.chars().enumerate() {
                spaced.push(c);
                spaced.push_str(&" ".repeat(spaces.get(i).copied().unwrap_or(0)));
            }
            if decodes_to_minified(&literal(&spaced), compact.as_bytes()) {
                let read: Result<serde_json::Value, _> = serde_json::from_str(&spaced);
                prop_assert_eq!(read.ok(), Some(value.clone()));
            }
        }
    }

    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i32>().prop_map(serde_json::Value::from),
            "[ a\"\\\\\n\t é]{0,6}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-c ]{0,3}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    #[test]
    fn an_indented_mirror_is_its_compact_member() {
        let raw = br#"{\n  \"rows\": [\n    1,\n    2\n  ]\n}"#;
        assert!(decodes_to_minified(raw, br#"{"rows":[1,2]}"#));
        assert!(!decodes_to_minified(raw, br#"{"rows":[1,3]}"#));
        // White space inside strings counts.
        assert!(!decodes_to_minified(br#"[\"a b\"]"#, br#"["ab"]"#));
    }

    #[test]
    fn strings_and_their_escapes_keep_their_white_space() {
        assert!(same_minified(br#"{ "a" : "x y" }"#, br#"{"a":"x y"}"#));
        assert!(!same_minified(br#"{"a":"x y"}"#, br#"{"a":"xy"}"#));
        assert!(same_minified(br#"[ "\" ", 1 ]"#, br#"["\" ",1]"#));
        assert!(!same_minified(br#"["\\" ,"]"#, br#"["\\",""]"#));
        assert!(!decodes_to_minified(br#"[1]"#, b"[1,2]"));
        assert!(!decodes_to_minified(br#"[1,2]"#, b"[1]"));
        // White space JSON does not allow: inside a number, a literal, between strings.
        assert!(!same_minified(b"[1 2]", b"[12]"));
        assert!(!same_minified(b"[tr ue]", b"[true]"));
        assert!(!same_minified(br#"{"a" "b":1}"#, br#"{"ab":1}"#));
        assert!(same_minified(b" [ 1 , 2 ] ", b"[1,2]"));
        assert!(same_minified(
            b"{\n  \"a\": [\n    true\n  ]\n}",
            br#"{"a":[true]}"#
        ));
    }
}

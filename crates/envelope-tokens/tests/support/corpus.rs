//! The corpus the counts are checked on: hand-picked texts of every kind a tool result holds,
//! then strings from a seeded generator that mixes their alphabets.

/// The hand-picked texts.
pub fn fixed() -> Vec<String> {
    let mut texts: Vec<String> = [
        // Prose in several scripts.
        "The quick brown fox jumps over the lazy dog. It's 5 o'clock; we'll see—they've gone, haven't they? I'D SAY IT'S DONE.",
        "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. Die Straße heißt Äußere Öde.",
        "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России.",
        "我能吞下玻璃而不伤身体。人工智能正在改变世界，模型的上下文以词元计量。",
        "私はガラスを食べられます。それは私を傷つけません。カタカナとひらがな、漢字。",
        "أنا قادر على أكل الزجاج و هذا لا يؤلمني. اللُّغَةُ العَرَبِيَّةُ جَمِيلَةٌ.",
        "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती। नमस्ते दुनिया।",
        "Ελληνικά: Μπορώ να φάω σπασμένα γυαλιά χωρίς να πάθω τίποτα.",
        "한국어: 나는 유리를 먹을 수 있어요. 그래도 아프지 않아요.",
        "עברית: אני יכול לאכול זכוכית וזה לא מזיק לי.",
        "ภาษาไทย: ฉันกินกระจกได้ แต่มันไม่ทำให้ฉันเจ็บ",
        // Code.
        "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * 2).collect();\n    println!(\"{:?}\", v);\n}\n",
        "def fib(n: int) -> int:\n\tif n < 2:\n\t\treturn n\n\treturn fib(n - 1) + fib(n - 2)\n\nprint([fib(i) for i in range(20)])\n",
        "const xs = [1, 2, 3].map((x) => x ** 2);\nexport default async function handler(req, res) { res.status(200).json({ ok: true }); }\r\n",
        "SELECT id, name FROM users WHERE created_at >= '2024-01-01' ORDER BY id DESC LIMIT 10;",
        "<html><body><div class=\"a\">x &amp; y</div></body></html>",
        // JSON, pretty and compact.
        "{\n  \"id\": 12345,\n  \"name\": \"envelope\",\n  \"tags\": [\"a\", \"b\"],\n  \"nested\": {\n    \"ok\": true,\n    \"value\": null\n  }\n}",
        "{\"id\":12345,\"name\":\"envelope\",\"tags\":[\"a\",\"b\"],\"nested\":{\"ok\":true,\"value\":null},\"f\":-1.5e-7}",
        "[{\"k\":\"\\u00e9\\n\"},{\"k\":\"\\\"quoted\\\"\"}]",
        // Numbers.
        "3.141592653589793238462643383279502884197169399375105820974944592307816406286",
        "1234567890123456789012345678901234567890 -0.000001 6.02214076e23 1e-308 0x1F 0b1010 1_000_000",
        "2024-11-28T12:00:00.123456Z 192.168.0.1 +49 (0)30 123456-78",
        // Base64.
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        // Emoji: plain, skin tones, ZWJ sequences, flags, keycaps.
        "😀😃😄 👍🏽👍🏿 👩‍👩‍👧‍👦 👨‍💻 🏳️‍🌈 🇩🇪🇯🇵🇺🇸 1️⃣ #️⃣ ❤️‍🔥",
        // Whitespace of every kind.
        "a  b   c\t\td\r\ne\r\n\r\nf\n\n\ng \u{A0}h\u{3000}i\u{2028}j\u{FEFF}k\u{85}l\u{B}m\u{C}n",
        // Where JavaScript's `\s` and Unicode's White_Space part: U+FEFF is a JS space, U+0085
        // is not (runs of them, and after punctuation, where the two split differently).
        "a\u{FEFF}\u{FEFF}\u{FEFF}b !!\u{FEFF} x.\u{85}\u{85} y end\u{85}\u{85}",
        "\u{3000}\u{3000}字 \u{2028}\u{2028}x\u{A0}\u{A0}\u{A0}",
        "   leading and trailing   ",
        "\n",
        " ",
        "\t",
        "",
        // Special-token look-alikes.
        "<|endoftext|>",
        "before <|endoftext|> after <|endofprompt|><|fim_prefix|><|fim_middle|><|fim_suffix|>",
        "<|endoftext|><|endoftext|> <| endoftext |> <|im_start|>user<|im_end|> <|",
        // Llama 3's special tokens (one token each there), a name that is none, and a name
        // inside an unclosed one.
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>",
        "<|reserved_special_token_5|> <|not_a_token|> <|<|eot_id|>|> <|eot_id",
        // Special in Llama 3.1 (and llama3-tokenizer-js), not in 3.0's file; and the other way.
        "<|eom_id|><|python_tag|><|finetune_right_pad_id|> <|reserved_special_token_247|>",
        "<|reserved_special_token_248|><|reserved_special_token_250|>",
        // Characters NFKC expands or folds (Anthropic's legacy tokenizer counts NFKC).
        "\u{FDFA} \u{FDFA}\u{FDFA} ﬃ ㍿ ¼ ℌ ① ｆｕｌｌ Ⅻ ǆ",
        // Contractions in every case, and the long s that folds to s.
        "it's IT'S it'S It'Ll we'RE they'VE I'M I'd You'D o'ſt 's 'S",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    // Long runs of one character.
    // js-tiktoken's merge loop is quadratic in a piece's length (10,000 'a' take it about 10 s
    // an encoding), so only the two runs the issue names are that long.
    for (c, n) in [
        ('a', 10_000),
        (' ', 10_000),
        ('\n', 1_000),
        ('9', 1_000),
        ('€', 500),
        ('字', 500),
    ] {
        texts.push(std::iter::repeat_n(c, n).collect());
    }
    texts.push(format!("x{}y", " ".repeat(1_000)));
    texts.push("ab".repeat(500));
    texts.push("😀".repeat(300));
    texts
}

/// A seeded generator (SplitMix64): the same corpus on every run and every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Ranges of code points the generator draws characters from, one alphabet each.
const ALPHABETS: &[(u32, u32)] = &[
    (0x61, 0x7A), // a-z
    (0x41, 0x5A), // A-Z
    (0x30, 0x39), // digits
    (0x21, 0x2F), // ASCII punctuation
    (0x3A, 0x40),
    (0x5B, 0x60),
    (0x7B, 0x7E),
    (0xC0, 0x17F),      // Latin-1 and Latin Extended-A (umlauts, ß, ſ)
    (0x391, 0x3C9),     // Greek
    (0x410, 0x44F),     // Cyrillic
    (0x5D0, 0x5EA),     // Hebrew
    (0x621, 0x652),     // Arabic letters and their marks
    (0x660, 0x669),     // Arabic-Indic digits
    (0x905, 0x94D),     // Devanagari letters and vowel signs
    (0x966, 0x96F),     // Devanagari digits
    (0xE01, 0xE3A),     // Thai
    (0x3041, 0x3096),   // Hiragana
    (0x30A1, 0x30FA),   // Katakana
    (0x4E00, 0x9FA5),   // CJK ideographs
    (0xAC00, 0xD7A3),   // Hangul syllables
    (0xFF01, 0xFF5E),   // full-width forms
    (0x2000, 0x206F),   // general punctuation (spaces, ZWJ, dashes, quotes)
    (0x300, 0x36F),     // combining marks
    (0x1F300, 0x1F64F), // emoji
    (0x1F1E6, 0x1F1FF), // regional indicators (flags)
];

/// Whole pieces the generator mixes in, for what single characters rarely make.
const SNIPPETS: &[&str] = &[
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\r\n",
    "\n\n",
    " \n",
    "\u{A0}",
    "\u{3000}",
    "\u{FEFF}",
    "\u{85}",
    "\u{2028}",
    "\u{B}",
    "\u{C}",
    "'s",
    "'S",
    "'ll",
    "'LL",
    "'Re",
    "'ve",
    "'d",
    "'M",
    "'ſ",
    "<|endoftext|>",
    "<|endofprompt|>",
    "<|fim_prefix|>",
    "<|",
    "|>",
    "\u{200D}",
    "👩\u{200D}💻",
    "🇩🇪",
    "🏽",
    "\u{FE0F}",
    "{\"a\":1}",
    "\": \"",
    "},{",
    "1234567",
    "3.25e-10",
    "0.000",
    "==",
    "/",
    "//",
    "/*",
    "::",
    "->",
    "=>",
    "...",
    "—",
    "«»",
    "¿",
    "¡",
];

/// A generated string: a few runs, each of one alphabet or snippet, so that runs of one script
/// meet runs of another, of digits, of spaces and of punctuation.
pub fn generated(rng: &mut Rng) -> String {
    let mut text = String::new();
    for _ in 0..1 + rng.below(12) {
        if rng.below(3) == 0 {
            text.push_str(SNIPPETS[rng.below(SNIPPETS.len())]);
            continue;
        }
        let (low, high) = *rng.pick(ALPHABETS);
        for _ in 0..1 + rng.below(10) {
            let code = low + rng.below((high - low + 1) as usize) as u32;
            if let Some(c) = char::from_u32(code) {
                text.push(c);
            }
        }
    }
    text
}

/// The whole corpus: the fixed texts, then `count` generated ones from `seed`.
pub fn corpus(seed: u64, count: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut texts = fixed();
    texts.extend((0..count).map(|_| generated(&mut rng)));
    texts
}

//! Server-sent events, parsed as the HTML standard says: a UTF-8 BOM at the start is
//! dropped; lines end with CRLF, LF or CR; `field: value` (one space after the colon
//! dropped); `data` lines joined with `\n`; `event` and `id` remembered; a line starting
//! with `:` is a comment; a blank line dispatches the event (nothing when no data came).

/// One event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field, when given.
    pub event: Option<String>,
    /// The `id` field, when given.
    pub id: Option<String>,
    /// The data lines, joined with `\n`.
    pub data: String,
}

/// The most bytes one event may hold (its data and an unfinished line): a stream that never
/// ends its event cannot fill the memory.
pub const MAX_EVENT: usize = 16 << 20;

/// An incremental parser: feed it bytes as they come, take the events it completes.
#[derive(Default)]
pub struct SseParser {
    pending: Vec<u8>,
    started: bool,
    /// The last byte fed was a CR: an LF right after it ends no second line.
    after_cr: bool,
    data: Option<String>,
    event: Option<String>,
    id: Option<String>,
}

impl SseParser {
    /// The events completed by `bytes`.
    ///
    /// ```
    /// use envelope_ops::openapi::sse::SseParser;
    ///
    /// let mut parser = SseParser::default();
    /// let events = parser.feed(b"\xEF\xBB\xBFevent: tick\nid: 7\ndata: {\"n\":1}\ndata: more\n\n: comment\n\n");
    /// assert_eq!(events.len(), 1);
    /// assert_eq!(events[0].event.as_deref(), Some("tick"));
    /// assert_eq!(events[0].data, "{\"n\":1}\nmore");
    /// ```
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        if !self.started {
            self.pending.extend_from_slice(bytes);
            if self.pending.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.pending) {
                return Vec::new();
            }
            self.started = true;
            let all = std::mem::take(&mut self.pending);
            let all = all.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&all);
            return self.feed_lines(all);
        }
        self.feed_lines(bytes)
    }

    /// The bytes held for the event under way (its data and an unfinished line); the
    /// caller stops the stream once this passes [`MAX_EVENT`].
    pub fn buffered(&self) -> usize {
        self.pending.len() + self.data.as_ref().map_or(0, String::len)
    }

    fn feed_lines(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'\n' && self.after_cr && i == start {
                // The LF of a CRLF whose CR ended the previous line.
                self.after_cr = false;
                start = i + 1;
                i += 1;
                continue;
            }
            self.after_cr = false;
            if b == b'\n' || b == b'\r' {
                self.after_cr = b == b'\r';
                // The unfinished line of earlier chunks, if any, is joined only when the line
                // ends: a long line is copied once, not once per chunk.
                let line = if self.pending.is_empty() {
                    String::from_utf8_lossy(&bytes[start..i]).into_owned()
                } else {
                    let mut line = std::mem::take(&mut self.pending);
                    line.extend_from_slice(&bytes[start..i]);
                    String::from_utf8_lossy(&line).into_owned()
                };
                if let Some(event) = self.line(&line) {
                    events.push(event);
                }
                start = i + 1;
            }
            i += 1;
        }
        self.pending.extend_from_slice(&bytes[start..]);
        events
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let data = self.data.take();
            let event = self.event.take();
            // `id` persists across events (the last event id), as in the standard.
            return data.map(|mut data| {
                data.pop();
                SseEvent {
                    event,
                    id: self.id.clone(),
                    data,
                }
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                // Each data line and an LF; the last LF goes at dispatch.
                let data = self.data.get_or_insert_with(String::new);
                data.push_str(value);
                data.push('\n');
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cut_anywhere_give_the_same_events() {
        let stream =
            b"data: 1\r\n\r\nevent: e\rdata: two\rdata: lines\r\rid: 9\ndata: {\"x\": 3}\n\n";
        let whole = SseParser::default().feed(stream);
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[1].data, "two\nlines");
        assert_eq!(whole[1].event.as_deref(), Some("e"));
        assert_eq!(whole[2].id.as_deref(), Some("9"));
        let empty_first = SseParser::default().feed(b"data:\ndata: x\n\n");
        assert_eq!(empty_first[0].data, "\nx");
        for cut in 0..stream.len() {
            let mut parser = SseParser::default();
            let mut events = parser.feed(&stream[..cut]);
            events.extend(parser.feed(&stream[cut..]));
            assert_eq!(events, whole, "cut at {cut}");
        }
    }
}

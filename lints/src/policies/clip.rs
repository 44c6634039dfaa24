//! `tool-output-clip`: pyAgentic's `ToolOutputClipPolicy(max_chars=8000, suffix="\n…[output
//! clipped]")` (pyagentic-reference §2.1).
//!
//! Append time only. A tool result (agent results included) whose content is non-empty and
//! longer than `max_chars` **code points** (Python `len`, not bytes, not graphemes) becomes
//! its first `max_chars` code points followed by `suffix`; the suffix is not counted against
//! the budget, so the clipped content is `max_chars + len(suffix)` long (and can be longer than
//! the original when the original was only slightly over the budget). Exactly `max_chars` long,
//! empty or absent content, tool-call arguments, user, assistant and summary messages are never
//! clipped. The copy keeps the id, name and kind; the raw log keeps the full text.

use super::{MessagePolicy, Msg};

/// pyAgentic's default `max_chars`.
pub const DEFAULT_MAX_CHARS: i64 = 8000;
/// pyAgentic's default suffix: a newline, U+2026 and `[output clipped]` (18 code points).
pub const DEFAULT_SUFFIX: &str = "\n\u{2026}[output clipped]";

/// The clip policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutputClip {
    /// Policy id.
    pub id: String,
    /// Budget in code points. Negative values slice from the end as Python does
    /// (`content[:-3]` keeps all but the last 3); config rejects them.
    pub max_chars: i64,
    /// Appended after the kept prefix.
    pub suffix: String,
}

impl Default for ToolOutputClip {
    fn default() -> Self {
        Self {
            id: "tool-output-clip".into(),
            max_chars: DEFAULT_MAX_CHARS,
            suffix: DEFAULT_SUFFIX.into(),
        }
    }
}

/// The first `n` code points of `s` (Python `s[:n]` for `n >= 0`).
pub fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

impl MessagePolicy for ToolOutputClip {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> &str {
        "tool-output-clip"
    }

    fn on_append(&self, item: &Msg) -> Result<Option<Msg>, String> {
        if !item.is_tool_result() {
            return Ok(None);
        }
        let Some(content) = item.content().filter(|c| !c.is_empty()) else {
            return Ok(None);
        };
        let len = item.chars() as i64;
        if len <= self.max_chars {
            return Ok(None);
        }
        let keep = if self.max_chars >= 0 {
            self.max_chars
        } else {
            (len + self.max_chars).max(0)
        };
        let mut clipped = prefix_chars(content, keep as usize).to_string();
        clipped.push_str(&self.suffix);
        Ok(Some(item.with_content(Some(&clipped))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::MessageKind;

    fn result(content: Option<&str>) -> Msg {
        let mut m = Msg::new(MessageKind::ToolResult).with_content(content);
        m.tool_call_id = Some("c1".into());
        m.name = Some("t".into());
        m
    }

    fn clip(max: i64, suffix: &str) -> ToolOutputClip {
        ToolOutputClip {
            id: "clip".into(),
            max_chars: max,
            suffix: suffix.into(),
        }
    }

    #[test]
    fn negative_budget_slices_from_the_end_like_python() {
        let p = clip(-3, "|");
        let out = p.on_append(&result(Some("abcdefg"))).unwrap().unwrap();
        assert_eq!(out.content(), Some("abcd|"));
        let out = p.on_append(&result(Some("ab"))).unwrap().unwrap();
        assert_eq!(out.content(), Some("|"));
    }

    #[test]
    fn zero_budget_keeps_only_the_suffix() {
        let out = clip(0, "…").on_append(&result(Some("x"))).unwrap().unwrap();
        assert_eq!((out.content(), out.chars()), (Some("…"), 1));
    }

    #[test]
    fn default_suffix_is_18_code_points() {
        assert_eq!(DEFAULT_SUFFIX.chars().count(), 18);
        assert_eq!(DEFAULT_SUFFIX.len(), 20);
    }
}

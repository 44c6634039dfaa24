//! `SBX003` on a source-encoding declaration that makes CPython read other code than
//! cellguard checks (round 7 S7-13).
//!
//! cellguard reads every cell as UTF-8 text. CPython, given the cell as bytes (a `.py` file it
//! runs, `compile(data, ...)` of bytes, `exec` of bytes), decodes them with the codec a
//! PEP 263 comment names on line 1, or on line 2 when line 1 is blank or a comment
//! (`# coding: utf-7`, `# -*- coding: utf_7 -*-`, `# vim: set fileencoding=utf-7 :`). Under
//! UTF-7 the line `s = "+ACIAOwBfAF8-import+AF8AXw-(+ACc-os+ACc-)+ADsAIg-"`, a string to a
//! UTF-8 reader, is `s = "";__import__('os');""` (checked on CPython 3.11.7): no rule can see
//! the code that runs.
//!
//! A declaration is fine when its codec reads ASCII bytes as the same characters and never
//! folds a non-ASCII byte into an ASCII one, so that the code's structure is what cellguard
//! reads: the UTF-8 family, ASCII, ISO-8859-*, Latin-1 and the Windows code pages 125x. Every
//! other codec (`utf-7`, `utf-16`, `cp037`, `shift_jis`, ...) is reported.

use super::sandbox::CODE_EXECUTION_BUILTIN;
use super::Checker;
use crate::diagnostic::Diagnostic;
use crate::source::TextRange;

/// Reports a PEP 263 encoding declaration naming a codec other than the ASCII-compatible ones.
pub fn check(checker: &mut Checker) {
    if !checker.enabled(&CODE_EXECUTION_BUILTIN) {
        return;
    }
    let Some((range, codec)) = declared_encoding(checker.src) else {
        return;
    };
    if same_structure(&codec) {
        return;
    }
    checker.report(
        Diagnostic::new(
            &CODE_EXECUTION_BUILTIN,
            range,
            format!("Encoding declaration `{codec}`: CPython decodes this code with it, while cellguard reads it as UTF-8, so the code that runs is not the code checked"),
        )
        .with_help("Cells are UTF-8: drop the declaration or declare `utf-8`"),
    );
}

/// The codec a PEP 263 declaration names (line 1, or line 2 after a blank or comment-only
/// line 1), with the range of the name, as CPython's tokenizer finds it: a comment matching
/// `coding[:=][ \t]*([-\w.]+)`.
pub fn declared_encoding(src: &str) -> Option<(TextRange, String)> {
    let src_nobom = src.strip_prefix('\u{feff}').unwrap_or(src);
    let base = src.len() - src_nobom.len();
    let mut offset = base;
    for (i, line) in src_nobom.split_inclusive('\n').take(2).enumerate() {
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start_matches([' ', '\t', '\x0c']);
        if let Some(comment) = trimmed.strip_prefix('#') {
            let cstart = offset + (body.len() - trimmed.len()) + 1;
            if let Some(pos) = comment.find("coding") {
                let after = &comment[pos + "coding".len()..];
                if let Some(rest) = after.strip_prefix([':', '=']) {
                    let lead = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                    let name: String = rest[lead..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                        .collect();
                    if !name.is_empty() {
                        let start = cstart + pos + "coding".len() + 1 + lead;
                        return Some((TextRange::new(start, start + name.len()), name));
                    }
                }
            }
        } else if i == 0 && !trimmed.is_empty() {
            // Line 2 counts only after a blank or comment-only line 1.
            return None;
        }
        offset += line.len();
    }
    None
}

/// True when `codec` reads ASCII bytes as themselves and never turns a non-ASCII byte into
/// an ASCII character: the code's tokens are the ones a UTF-8 reader sees.
fn same_structure(codec: &str) -> bool {
    let c = codec.to_ascii_lowercase().replace('_', "-");
    let c = c.as_str();
    matches!(
        c,
        "utf-8"
            | "utf8"
            | "u8"
            | "utf"
            | "utf-8-sig"
            | "utf8-sig"
            | "cp65001"
            | "ascii"
            | "us-ascii"
            | "646"
            | "latin-1"
            | "latin1"
            | "latin"
            | "l1"
            | "iso-latin-1"
            | "cp819"
            | "8859"
    ) || c.starts_with("utf-8-")
        || c.starts_with("iso-8859-")
        || c.starts_with("iso8859-")
        || c.starts_with("latin-1-")
        || c.strip_prefix("cp125")
            .or_else(|| c.strip_prefix("windows-125"))
            .is_some_and(|d| d.len() == 1 && d.chars().all(|x| x.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(src: &str) -> Option<String> {
        declared_encoding(src).map(|(r, c)| {
            assert_eq!(&src[r.start..r.end], c);
            c
        })
    }

    #[test]
    fn declarations_are_found_where_cpython_looks() {
        assert_eq!(codec("# coding: utf-7\nx = 1\n").as_deref(), Some("utf-7"));
        assert_eq!(codec("# -*- coding: utf_7 -*-\n").as_deref(), Some("utf_7"));
        assert_eq!(
            codec("#!/usr/bin/env python\n# vim: set fileencoding=utf-7 :\n").as_deref(),
            Some("utf-7")
        );
        assert_eq!(codec("\n# coding=latin-1\n").as_deref(), Some("latin-1"));
        // Line 2 after code, line 3, and a string are not declarations.
        assert_eq!(codec("x = 1\n# coding: utf-7\n"), None);
        assert_eq!(codec("#\n#\n# coding: utf-7\n"), None);
        assert_eq!(codec("s = '# coding: utf-7'\n"), None);
        assert_eq!(codec("# coding\n"), None);
    }

    #[test]
    fn only_codecs_that_keep_the_tokens_pass() {
        for ok in [
            "utf-8",
            "UTF8",
            "utf_8",
            "ascii",
            "latin-1",
            "iso-8859-15",
            "cp1252",
        ] {
            assert!(same_structure(ok), "{ok}");
        }
        for bad in [
            "utf-7",
            "utf_7",
            "utf-16",
            "cp037",
            "shift_jis",
            "rot13",
            "cp12520",
        ] {
            assert!(!same_structure(bad), "{bad}");
        }
    }
}

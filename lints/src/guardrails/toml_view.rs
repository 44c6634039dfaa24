//! A spanned view of TOML config text, so every guardrail setting can be reported at its
//! file:line:col. Built from `toml::de::DeTable`, which keeps spans for every key and value.

use crate::config::ConfigError;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A TOML value with the byte span of its text.
#[derive(Debug, Clone, PartialEq)]
pub struct SVal {
    /// Byte range in the config text.
    pub span: Range<usize>,
    /// The value.
    pub kind: SKind,
}

/// TOML value kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum SKind {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A date or time (kept as written).
    Datetime(String),
    /// An array.
    Array(Vec<SVal>),
    /// A table: (key, key span, value), in key order.
    Table(Vec<(String, Range<usize>, SVal)>),
}

impl SVal {
    fn from_de(v: &toml::Spanned<toml::de::DeValue<'_>>) -> SVal {
        use toml::de::DeValue;
        let kind = match v.get_ref() {
            DeValue::String(s) => SKind::Str(s.to_string()),
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => SKind::Int(n),
                Err(_) => SKind::Float(f64::INFINITY),
            },
            DeValue::Float(f) => {
                SKind::Float(f.as_str().replace('_', "").parse().unwrap_or(f64::NAN))
            }
            DeValue::Boolean(b) => SKind::Bool(*b),
            DeValue::Datetime(d) => SKind::Datetime(d.to_string()),
            DeValue::Array(a) => SKind::Array(a.iter().map(SVal::from_de).collect()),
            DeValue::Table(t) => SKind::Table(
                t.iter()
                    .map(|(k, v)| (k.get_ref().to_string(), k.span(), SVal::from_de(v)))
                    .collect(),
            ),
        };
        SVal {
            span: v.span(),
            kind,
        }
    }

    /// A short description of the kind, for messages (`a string`, `a table`, ...).
    pub fn describe(&self) -> &'static str {
        match self.kind {
            SKind::Str(_) => "a string",
            SKind::Int(_) => "an integer",
            SKind::Float(_) => "a float",
            SKind::Bool(_) => "a boolean",
            SKind::Datetime(_) => "a date",
            SKind::Array(_) => "an array",
            SKind::Table(_) => "a table",
        }
    }

    /// The entries of a table (`None` for other kinds).
    pub fn table(&self) -> Option<&[(String, Range<usize>, SVal)]> {
        match &self.kind {
            SKind::Table(t) => Some(t),
            _ => None,
        }
    }

    /// A table entry by key.
    pub fn get(&self, key: &str) -> Option<&SVal> {
        self.table()?
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, _, v)| v)
    }

    /// The value as JSON (dates as strings).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            SKind::Str(s) | SKind::Datetime(s) => Value::String(s.clone()),
            SKind::Int(n) => Value::from(*n),
            SKind::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            SKind::Bool(b) => Value::Bool(*b),
            SKind::Array(a) => Value::Array(a.iter().map(SVal::to_json).collect()),
            SKind::Table(t) => {
                Value::Object(t.iter().map(|(k, _, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }
}

/// A config text with its path: locates errors.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The file.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// The parsed top-level table.
    pub root: SVal,
    /// Warnings (`FILE:LINE:COL: message`) collected while reading it.
    pub warnings: std::cell::RefCell<Vec<String>>,
    /// True while guardrails are compiled under `--match substring` (warnings name the flag).
    pub forced_substring: std::cell::Cell<bool>,
}

impl Doc {
    /// Parses `text`. In a `pyproject.toml` the root is `[tool.cellguard]`.
    ///
    /// Errors: TOML syntax (located).
    pub fn parse(path: &Path, text: String) -> Result<Doc, ConfigError> {
        let root = match toml::de::DeTable::parse(&text) {
            Ok(t) => {
                let spanned =
                    toml::Spanned::new(t.span(), toml::de::DeValue::Table(t.into_inner()));
                SVal::from_de(&spanned)
            }
            Err(e) => {
                return Err(ConfigError::at(
                    path,
                    &text,
                    e.span().map(|s| s.start),
                    e.message().trim().to_string(),
                ))
            }
        };
        let is_pyproject = path.file_name().and_then(|n| n.to_str()) == Some("pyproject.toml");
        let root = if is_pyproject {
            root.get("tool")
                .and_then(|t| t.get("cellguard"))
                .cloned()
                .unwrap_or(SVal {
                    span: 0..0,
                    kind: SKind::Table(Vec::new()),
                })
        } else {
            root
        };
        Ok(Doc {
            path: path.to_path_buf(),
            text,
            root,
            warnings: Default::default(),
            forced_substring: Default::default(),
        })
    }

    /// Records a warning located at the start of `span` (the config stays usable).
    pub fn warn(&self, span: &Range<usize>, message: impl Into<String>) {
        let e = ConfigError::at(&self.path, &self.text, Some(span.start), message);
        self.warnings.borrow_mut().push(e.to_string());
    }

    /// An error located at the start of `span`.
    pub fn error(&self, span: &Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError::at(&self.path, &self.text, Some(span.start), message)
    }
}

/// The entries of a TOML table: (key, key span, value), in key order.
pub type Table<'a> = &'a [(String, Range<usize>, SVal)];

/// The value of `key` in `t`, if present.
pub fn get<'a>(t: Table<'a>, key: &str) -> Option<&'a SVal> {
    t.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v)
}

/// `v` as a string. Errors (located at `v`): any other kind, named by `what`.
pub fn string(d: &Doc, v: &SVal, what: &str) -> Result<String, ConfigError> {
    match &v.kind {
        SKind::Str(s) => Ok(s.clone()),
        _ => Err(d.error(
            &v.span,
            format!("{what} must be a string, found {}", v.describe()),
        )),
    }
}

/// `v` as a boolean. Errors (located at `v`): any other kind, named by `what`.
pub fn boolean(d: &Doc, v: &SVal, what: &str) -> Result<bool, ConfigError> {
    match v.kind {
        SKind::Bool(b) => Ok(b),
        _ => Err(d.error(
            &v.span,
            format!("{what} must be true or false, found {}", v.describe()),
        )),
    }
}

/// `v` as a finite number (an integer or a float). Errors (located at `v`): another kind, or
/// `inf`/`nan`, named by `what`.
pub fn number(d: &Doc, v: &SVal, what: &str) -> Result<f64, ConfigError> {
    let x = match v.kind {
        SKind::Int(n) => n as f64,
        SKind::Float(f) => f,
        _ => {
            return Err(d.error(
                &v.span,
                format!("{what} must be a number, found {}", v.describe()),
            ))
        }
    };
    if !x.is_finite() {
        return Err(d.error(&v.span, format!("{what} must be a finite number")));
    }
    Ok(x)
}

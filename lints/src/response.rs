//! Cells from raw LLM responses (Colony `_extract_code`, the `{"code": ...}` envelope,
//! smolagents `<code>` blocks). Placeholder: the whole response is one cell until the extraction
//! work of the `check` issue lands.

use crate::extract::{Cell, CellOrigin, Extraction};

/// Extracts the cells of a raw response.
pub fn extract(text: &str) -> Extraction {
    let mut cell = Cell::whole_file(text);
    cell.origin = CellOrigin::Response;
    Extraction {
        cells: vec![cell],
        diagnostics: Vec::new(),
        multi_cell: false,
    }
}

"""`cellguard server` driven by pytest-lsp's client with VS Code's capability preset.

The binary is $CELLGUARD_BIN, else target/debug/cellguard (built by `cargo test`).
"""

import os
import pathlib

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("CELLGUARD_BIN") or str(ROOT / "target" / "debug" / "cellguard")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[BIN, "server"]))
async def client(lsp_client: LanguageClient, tmp_path):
    # VS Code accepts dynamic registrations (the server registers its file watchers).
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        return None

    @lsp_client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def unregister(params: types.UnregistrationParams):
        return None

    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        )
    )
    lsp_client.init_result = result
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


def open_doc(client: LanguageClient, name: str, text: str) -> str:
    uri = (client.root / name).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    return uri


async def test_vscode_diagnostics_one_path_with_utf16_columns(client: LanguageClient):
    caps = client.init_result.capabilities
    assert caps.position_encoding == types.PositionEncodingKind.Utf16
    preset = client_capabilities("visual-studio-code")
    pull = preset.text_document.diagnostic is not None
    # The server serves pull exactly when the client declares it.
    assert (caps.diagnostic_provider is not None) == pull
    uri = open_doc(client, "cell.py", "s = '😀'; import os\n")
    if pull:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        items = report.items
        assert client.diagnostics == {}, "pull only: nothing pushed"
    else:
        while uri not in client.diagnostics:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        items = client.diagnostics[uri]
    assert [d.code for d in items] == ["IMP001"]
    d = items[0]
    # `s = '` 5 units, the emoji 2, `'; ` 3, `import ` 7: `os` starts at UTF-16 column 17.
    assert (d.range.start.line, d.range.start.character) == (0, 17)
    assert d.source == "cellguard"
    # The rule doc link: docs/rules/<name>.md of the source tree the binary was built from.
    href = d.code_description.href
    assert href.startswith("file://") and href.endswith("/docs/rules/blocked-import.md"), href
    from urllib.parse import unquote, urlparse

    page = pathlib.Path(unquote(urlparse(href).path))
    assert page.read_text(encoding="utf-8").startswith("# blocked-import (IMP001)")


async def test_vscode_fix_all_and_hover(client: LanguageClient):
    uri = open_doc(client, "fix.py", "run('A.b.c')  # cellguard: ignore[IMP001]\n")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    assert [a.kind for a in actions] == ["source.fixAll.cellguard"]
    edit = actions[0].edit.document_changes[0].edits[0]
    assert edit.new_text.startswith("await ")
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=36),
        )
    )
    assert hover.contents.value.startswith("# blocked-import (IMP001)")

// cellguard for VS Code: starts `cellguard server` (the language server is in the binary) and
// connects it to Python and Markdown documents.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

/** A string setting, or undefined when unset or blank (VS Code reads unset as ""). */
function str(c, key) {
  const v = c.get(key);
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

/** A list setting, or undefined when unset or empty (an empty `select` would select nothing). */
function nonEmptyList(c, key) {
  const v = c.get(key);
  return Array.isArray(v) && v.length > 0 ? v : undefined;
}

/** The settings sent to the server (the `cellguard` section minus editor-only keys). */
function serverSettings() {
  const c = vscode.workspace.getConfiguration("cellguard");
  const settings = {
    configuration: str(c, "configuration"),
    knowledgeBase: c.get("knowledgeBase"),
    profile: str(c, "profile"),
    dialect: str(c, "dialect"),
    select: nonEmptyList(c, "select"),
    extendSelect: c.get("extendSelect"),
    ignore: c.get("ignore"),
    lint: { enable: c.get("lint.enable") },
    fixAll: c.get("fixAll"),
    codeAction: {
      disableRuleComment: { enable: c.get("codeAction.disableRuleComment.enable") },
      fixViolation: { enable: c.get("codeAction.fixViolation.enable") },
    },
    inlayHints: { enable: c.get("inlayHints.enable") },
    ruleDocsUrl: str(c, "ruleDocsUrl"),
  };
  return settings;
}

function binaryPath() {
  const configured = vscode.workspace.getConfiguration("cellguard").get("path");
  return configured && configured.trim() !== "" ? configured : "cellguard";
}

async function start(context) {
  const command = binaryPath();
  const serverOptions = {
    run: { command, args: ["server"], transport: TransportKind.stdio },
    debug: { command, args: ["server"], transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      { scheme: "file", language: "markdown" },
      { scheme: "untitled", language: "markdown" },
    ],
    initializationOptions: { settings: serverSettings() },
    outputChannelName: "cellguard",
    traceOutputChannel: vscode.window.createOutputChannel("cellguard trace"),
  };
  client = new LanguageClient("cellguard", "cellguard", serverOptions, clientOptions);
  await client.start();
}

// The palette commands this extension registers. None may be an id the server lists in
// `executeCommandProvider.commands` (`cellguard.printDebugInformation`,
// `cellguard.applyAutofix`): vscode-languageclient registers each of those itself while it
// starts, and VS Code's registry throws "command already exists", which fails `client.start()`.
// So the palette's debug command has an id of its own and asks the server for the text.
async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("cellguard.debugInformation", async () => {
      if (!client) {
        return;
      }
      const info = await client.sendRequest("workspace/executeCommand", {
        command: "cellguard.printDebugInformation",
        arguments: [],
      });
      client.outputChannel.appendLine(info);
      client.outputChannel.show(true);
    }),
    vscode.commands.registerCommand("cellguard.restart", async () => {
      if (client) {
        await client.stop();
      }
      await start(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!client || !e.affectsConfiguration("cellguard")) {
        return;
      }
      if (e.affectsConfiguration("cellguard.path")) {
        // A different binary: restart.
        await client.stop();
        await start(context);
        return;
      }
      // The server re-reads settings and re-diagnoses open documents; no restart needed.
      client.sendNotification("workspace/didChangeConfiguration", {
        settings: { cellguard: serverSettings() },
      });
    })
  );
  try {
    await start(context);
  } catch (err) {
    vscode.window.showErrorMessage(
      `cellguard: could not start \`${binaryPath()} server\` (${err}). Set "cellguard.path" to the binary.`
    );
  }
}

async function deactivate() {
  if (client) {
    await client.stop();
  }
}

module.exports = { activate, deactivate };

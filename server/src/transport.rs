//! A framing guard between stdio and tower-lsp-server.
//!
//! tower-lsp-server stops reading its input after the first message it cannot decode (bad
//! headers, a body that is not UTF-8 or JSON, or JSON that is no JSON-RPC message): one
//! malformed message would end the session. This guard reads the client's frames itself,
//! forwards every well-formed message unchanged, and answers the others with a JSON-RPC error
//! (`-32700` parse error, `-32600` invalid request, with the request's id when it has one), then
//! goes on reading. Output frames of the server and these error answers are written to stdout
//! whole, one at a time, so they never interleave.

use serde_json::{json, Value};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc;

/// Longest header line accepted (bytes); longer lines are garbage and skipped.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// Largest message body accepted (bytes); larger bodies are skipped with an error answer.
pub const MAX_BODY: usize = 512 * 1024 * 1024;

/// One header line, without its line ending; `None` at end of input. Lines longer than
/// [`MAX_HEADER_LINE`] are consumed to their end and returned truncated (they never parse).
async fn read_header_line<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() { None } else { Some(line) });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let n = chunk.len();
        if line.len() < MAX_HEADER_LINE {
            let room = MAX_HEADER_LINE - line.len();
            line.extend_from_slice(&chunk[..n.min(room)]);
        }
        r.consume(n);
        if done {
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            return Ok(Some(line));
        }
    }
}

/// Byte offset of a `Content-Length:` header name in `line` (ASCII case-insensitive).
fn find_content_length(line: &str) -> Option<usize> {
    const NAME: &[u8] = b"content-length:";
    line.as_bytes()
        .windows(NAME.len())
        .position(|w| w.eq_ignore_ascii_case(NAME))
}

/// A framed JSON-RPC message.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn error_frame(id: Value, code: i64, message: &str) -> Vec<u8> {
    let v = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    frame(v.to_string().as_bytes())
}

/// Checks one message body: `Ok` when tower-lsp-server can decode it, else the error answer.
pub fn check_body(body: &[u8]) -> Result<(), Vec<u8>> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Err(error_frame(
            Value::Null,
            -32700,
            "Parse error: the message is not valid UTF-8",
        ));
    };
    if serde_json::from_str::<jsonrpc::Response>(text).is_ok() {
        return Ok(());
    }
    if let Ok(req) = serde_json::from_str::<jsonrpc::Request>(text) {
        // LSP "$ Notifications and Requests": a `$/` request the server does not implement
        // is answered with MethodNotFound (tower-lsp-server drops every `$/` message, which
        // left such a request pending forever); `$/` notifications are ignored.
        if let (Some(id), true) = (req.id(), req.method().starts_with("$/")) {
            let id = serde_json::to_value(id).unwrap_or(Value::Null);
            return Err(error_frame(
                id,
                -32601,
                &format!("Method not found: {}", req.method()),
            ));
        }
        return Ok(());
    }
    match serde_json::from_str::<Value>(text) {
        Err(e) => Err(error_frame(
            Value::Null,
            -32700,
            &format!("Parse error: {e}"),
        )),
        Ok(v) => {
            let id = match v.get("id") {
                Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
                _ => Value::Null,
            };
            Err(error_frame(
                id,
                -32600,
                "Invalid request: not a JSON-RPC 2.0 request, notification or response",
            ))
        }
    }
}

/// True when `body` is the `exit` notification.
fn is_exit(body: &[u8]) -> bool {
    // Cheap pre-check: most bodies are not `exit`.
    body.len() < 4096
        && serde_json::from_slice::<Value>(body).is_ok_and(|v| {
            v.get("method").and_then(Value::as_str) == Some("exit") && v.get("id").is_none()
        })
}

/// Reads the client's frames from `input`, forwards the well-formed ones to `to_server` and
/// sends error answers to `out`. Returns at end of input (dropping `to_server`, which ends the
/// server's session).
pub async fn pump_input<R, W>(input: R, to_server: W, out: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    pump_input_watching_exit(input, to_server, out, &tokio::sync::Notify::new()).await
}

/// [`pump_input`], also signalling `exit_seen` once the `exit` notification has been forwarded,
/// so the caller can end the process even while handlers still wait on the client (LSP: `exit`
/// asks the server to exit its process at once).
pub async fn pump_input_watching_exit<R, W>(
    input: R,
    mut to_server: W,
    out: mpsc::UnboundedSender<Vec<u8>>,
    exit_seen: &tokio::sync::Notify,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = BufReader::with_capacity(64 * 1024, input);
    loop {
        let mut length: Option<usize> = None;
        let mut bad_header = false;
        let mut saw_header = false;
        loop {
            let line = match read_header_line(&mut r).await {
                Ok(Some(l)) => l,
                _ => return,
            };
            if line.is_empty() {
                if saw_header {
                    break;
                }
                continue;
            }
            saw_header = true;
            let mut text = String::from_utf8_lossy(&line).into_owned();
            // Resynchronise after a body whose `Content-Length` was wrong: the rest of that
            // body (or garbage) runs into the next header line, `...}Content-Length: 52`.
            // What precedes the header is answered as a parse error; the header block starts
            // afresh at `Content-Length`.
            if let Some(pos) = find_content_length(&text).filter(|&p| p > 0) {
                if !text[..pos].trim().is_empty() {
                    let _ = out.send(error_frame(
                        Value::Null,
                        -32700,
                        "Parse error: bytes outside any message (was a `Content-Length` wrong?)",
                    ));
                }
                text = text[pos..].to_string();
                length = None;
                bad_header = false;
            }
            match text.split_once(':') {
                Some((k, v)) if k.trim().eq_ignore_ascii_case("content-length") => {
                    match v.trim().parse::<usize>() {
                        Ok(n) => length = Some(n),
                        Err(_) => bad_header = true,
                    }
                }
                Some((k, _)) if k.trim().eq_ignore_ascii_case("content-type") => {}
                Some(_) => {}
                None => bad_header = true,
            }
        }
        let Some(n) = length.filter(|_| !bad_header) else {
            let _ = out.send(error_frame(
                Value::Null,
                -32700,
                "Parse error: malformed header (expected `Content-Length: N` then an empty line)",
            ));
            continue;
        };
        if n > MAX_BODY {
            // Skip the body without holding it.
            let mut skip = (&mut r).take(n as u64);
            if tokio::io::copy(&mut skip, &mut tokio::io::sink())
                .await
                .is_err()
            {
                return;
            }
            let _ = out.send(error_frame(
                Value::Null,
                -32600,
                &format!("Invalid request: message of {n} bytes is larger than {MAX_BODY}"),
            ));
            continue;
        }
        let mut body = vec![0u8; n];
        if r.read_exact(&mut body).await.is_err() {
            return;
        }
        match check_body(&body) {
            Ok(()) => {
                if to_server.write_all(&frame(&body)).await.is_err() {
                    return;
                }
                if to_server.flush().await.is_err() {
                    return;
                }
                if is_exit(&body) {
                    exit_seen.notify_one();
                }
            }
            Err(answer) => {
                let _ = out.send(answer);
            }
        }
    }
}

/// Splits the server's output stream into whole frames and sends each to `out`.
pub async fn pump_output<R: AsyncRead + Unpin>(
    from_server: R,
    out: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut r = BufReader::with_capacity(64 * 1024, from_server);
    loop {
        let mut header = Vec::new();
        let mut length: Option<usize> = None;
        loop {
            let line = match read_header_line(&mut r).await {
                Ok(Some(l)) => l,
                _ => return,
            };
            header.extend_from_slice(&line);
            header.extend_from_slice(b"\r\n");
            if line.is_empty() {
                break;
            }
            let text = String::from_utf8_lossy(&line);
            if let Some((k, v)) = text.split_once(':') {
                if k.trim().eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().ok();
                }
            }
        }
        let n = length.unwrap_or(0);
        let mut body = vec![0u8; n];
        if r.read_exact(&mut body).await.is_err() {
            return;
        }
        header.extend_from_slice(&body);
        if out.send(header).is_err() {
            return;
        }
    }
}

/// Writes frames to `output` in arrival order until every sender is gone.
pub async fn write_frames<W: AsyncWrite + Unpin>(
    mut output: W,
    mut frames: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(f) = frames.recv().await {
        if output.write_all(&f).await.is_err() {
            return;
        }
        // Flush when no other frame is waiting, so bursts go out in one write.
        if frames.is_empty() && output.flush().await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// issue 5 S1: a `$/` request gets MethodNotFound with its id; a `$/` notification and an
    /// ordinary request pass through.
    #[test]
    fn dollar_requests_get_method_not_found() {
        for (body, id) in [
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"$/customThing","params":{}}"#,
                json!(2),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":"$/setTrace","params":{"value":"off"}}"#,
                json!("x"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"$/progress"}"#,
                json!(3),
            ),
        ] {
            let answer = check_body(body.as_bytes()).unwrap_err();
            let text = String::from_utf8(answer).unwrap();
            let v: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
            assert_eq!(v["id"], id, "{body}");
            assert_eq!(v["error"]["code"], -32601, "{body}");
        }
        assert!(
            check_body(br#"{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}"#)
                .is_ok()
        );
        assert!(
            check_body(br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
                .is_ok()
        );
        assert!(check_body(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#).is_ok());
    }

    #[tokio::test]
    async fn malformed_frames_are_answered_and_reading_goes_on() {
        let good = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let mut input = Vec::new();
        input.extend(frame(b"{not json"));
        input.extend(b"Garbage without colon\r\n\r\n");
        input.extend(frame(br#"{"id": 7, "hello": 1}"#));
        input.extend(frame(&[0xff, 0xfe]));
        input.extend(b"Content-Length: abc\r\n\r\n");
        input.extend(frame(good));
        let (to_server, mut server_side) = tokio::io::duplex(1 << 16);
        let (tx, mut rx) = mpsc::unbounded_channel();
        pump_input(&input[..], to_server, tx).await;
        let mut forwarded = Vec::new();
        server_side.read_to_end(&mut forwarded).await.unwrap();
        assert_eq!(forwarded, frame(good));
        let mut answers = Vec::new();
        while let Ok(f) = rx.try_recv() {
            let text = String::from_utf8(f).unwrap();
            let body = text.split("\r\n\r\n").nth(1).unwrap().to_string();
            let v: Value = serde_json::from_str(&body).unwrap();
            answers.push((v["id"].clone(), v["error"]["code"].as_i64().unwrap()));
        }
        assert_eq!(
            answers,
            vec![
                (Value::Null, -32700),
                (Value::Null, -32700),
                (json!(7), -32600),
                (Value::Null, -32700),
                (Value::Null, -32700),
            ]
        );
    }

    /// A wrong `Content-Length` (too short, unparsable, absurd) leaves the rest of a body in
    /// front of the next header: reading resynchronises at the next `Content-Length`, so the
    /// messages after it are served (a too long one swallows the start of the next message,
    /// which only the one after it survives).
    #[tokio::test]
    async fn wrong_content_lengths_resynchronise_at_the_next_header() {
        let good = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        let body = br#"{"jsonrpc":"2.0","id":"x","method":5}"#;
        for junk in [
            [b"Content-Length: 30\r\n\r\n".as_slice(), body].concat(),
            [b"Content-Length: abc\r\n\r\n".as_slice(), b"{}"].concat(),
            [
                b"Content-Length: 99999999999999999999\r\n\r\n".as_slice(),
                b"{}",
            ]
            .concat(),
            [b"content-length: 60\r\n\r\n".as_slice(), body].concat(),
        ] {
            let mut input = junk.clone();
            for _ in 0..3 {
                input.extend(frame(good));
            }
            let (to_server, mut server_side) = tokio::io::duplex(1 << 16);
            let (tx, _rx) = mpsc::unbounded_channel();
            pump_input(&input[..], to_server, tx).await;
            let mut forwarded = Vec::new();
            server_side.read_to_end(&mut forwarded).await.unwrap();
            let n = forwarded
                .windows(good.len())
                .filter(|w| *w == good.as_slice())
                .count();
            // The too-long length eats the first good message's header.
            let expected = if junk.starts_with(b"content-length: 60") {
                2
            } else {
                3
            };
            assert_eq!(n, expected, "{}", String::from_utf8_lossy(&junk));
        }
    }
}

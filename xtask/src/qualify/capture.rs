//! The capture endpoint: a real HTTP/1.1 server on the loopback interface that records every
//! request a CLI sends and answers just enough of each model API for the CLI to finish its first
//! turn (a CLI that fails after its first request is fine: the request is what is checked).
//!
//! Built on `tiny_http` (0.12, the tiny-http organisation's crate): a synchronous server with four
//! small dependencies, no async runtime and no TLS, which keeps xtask's build (compiled by every
//! `cargo clippy --workspace`) a few seconds longer rather than the tens of seconds `hyper`,
//! `hyper-util` and `tokio` would add. One request at a time is all a sequential qualification
//! needs; the parser handles keep-alive, `Transfer-Encoding: chunked` bodies and
//! `Expect: 100-continue`, which the CLIs' HTTP clients use.
//!
//! Answers (first matching path suffix; everything else is a 404 with a JSON body):
//!
//! | request | answer |
//! |---|---|
//! | `POST …/messages` (Anthropic Messages; Claude Code, `?beta=true` allowed) | a one-word assistant message, as server-sent events when `"stream": true`, else JSON |
//! | `POST …/responses` (OpenAI Responses; Codex, Pi) | `response.created`, `response.output_item.done`, `response.completed` as server-sent events |
//! | `POST …/chat/completions` (OpenAI Chat Completions; Qwen Code) | one chunk and `[DONE]` |
//! | `POST …/models/<model>:streamGenerateContent` (Gemini API, `?alt=sse`; Gemini CLI) | one `GenerateContentResponse` chunk, finish reason `STOP`, as server-sent events |
//! | `POST …/models/<model>:generateContent` (Gemini API) | one `GenerateContentResponse` as JSON |
//! | `POST …/models/<model>:countTokens` (Gemini API) | `{"totalTokens": 1}` |
//! | `CONNECT` (a CLI trying to leave through the proxy the qualification sets) | 403, counted as stray |

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use anyhow::{Context as _, Result};
use serde_json::{Value, json};
use tiny_http::{Header, Request, Response, Server};

/// One recorded request.
#[derive(Clone, Debug)]
pub struct Captured {
    /// The HTTP method, upper case.
    pub method: String,
    /// The request target (path and query).
    pub path: String,
    /// The body as text (lossy: the APIs send JSON).
    pub body: String,
}

impl Captured {
    /// A request to one of the model APIs (the ones that carry prompts).
    pub fn is_model_call(&self) -> bool {
        self.method == "POST" && api_of(&self.path).is_some()
    }
}

/// A running endpoint; dropping it stops the server.
pub struct Capture {
    server: Arc<Server>,
    log: Arc<Mutex<Vec<Captured>>>,
    thread: Option<JoinHandle<()>>,
    port: u16,
}

impl Capture {
    /// Starts the endpoint on `127.0.0.1` at a free port.
    pub fn start() -> Result<Capture> {
        let server = Server::http("127.0.0.1:0").map_err(|err| {
            anyhow::anyhow!("127.0.0.1: cannot start the capture endpoint: {err}")
        })?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|addr| addr.port())
            .context("127.0.0.1: the capture endpoint has no TCP port")?;
        let server = Arc::new(server);
        let log = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let server = Arc::clone(&server);
            let log = Arc::clone(&log);
            std::thread::spawn(move || serve(&server, &log))
        };
        Ok(Capture {
            server,
            log,
            thread: Some(thread),
            port,
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Everything recorded since the last call, oldest first.
    pub fn drain(&self) -> Vec<Captured> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(server: &Server, log: &Mutex<Vec<Captured>>) {
    for mut request in server.incoming_requests() {
        let mut body = Vec::new();
        // A body that cannot be read whole is recorded as far as it came.
        let _ = request.as_reader().read_to_end(&mut body);
        let captured = Captured {
            method: request.method().as_str().to_ascii_uppercase(),
            path: request.url().to_string(),
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        let answer = answer(&captured);
        log.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(captured);
        respond(request, answer);
    }
}

/// The API a path belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    AnthropicMessages,
    OpenAiResponses,
    ChatCompletions,
    GeminiStream,
    GeminiGenerate,
    GeminiCountTokens,
}

fn api_of(path: &str) -> Option<Api> {
    let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
    // The Gemini API names the method after the model: `/v1beta/models/<model>:<method>`.
    let gemini_method = path
        .rsplit_once('/')
        .filter(|(dir, _)| dir.ends_with("/models"))
        .and_then(|(_, last)| last.rsplit_once(':'))
        .map(|(_, method)| method);
    if let Some(method) = gemini_method {
        return match method {
            "streamGenerateContent" => Some(Api::GeminiStream),
            "generateContent" => Some(Api::GeminiGenerate),
            "countTokens" => Some(Api::GeminiCountTokens),
            _ => None,
        };
    }
    if path.ends_with("/messages") {
        Some(Api::AnthropicMessages)
    } else if path.ends_with("/responses") {
        Some(Api::OpenAiResponses)
    } else if path.ends_with("/chat/completions") {
        Some(Api::ChatCompletions)
    } else {
        None
    }
}

struct Answer {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
}

fn answer(request: &Captured) -> Answer {
    let parsed: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
    let model = parsed["model"].as_str().unwrap_or("qualify").to_string();
    let stream = parsed["stream"].as_bool().unwrap_or(false);
    match (request.method.as_str(), api_of(&request.path)) {
        ("POST", Some(Api::AnthropicMessages)) if stream => sse(&anthropic_events(&model)),
        ("POST", Some(Api::AnthropicMessages)) => json_answer(&anthropic_message(&model, true)),
        ("POST", Some(Api::OpenAiResponses)) => sse(&responses_events(&model)),
        ("POST", Some(Api::ChatCompletions)) => Answer {
            status: 200,
            content_type: "text/event-stream",
            body: format!("data: {}\n\ndata: [DONE]\n\n", chat_chunk(&model)).into_bytes(),
        },
        // The Gemini API ends each server-sent event with CRLF CRLF.
        ("POST", Some(Api::GeminiStream)) => Answer {
            status: 200,
            content_type: "text/event-stream",
            body: format!("data: {}\r\n\r\n", gemini_response()).into_bytes(),
        },
        ("POST", Some(Api::GeminiGenerate)) => json_answer(&gemini_response()),
        ("POST", Some(Api::GeminiCountTokens)) => json_answer(&json!({"totalTokens": 1})),
        ("CONNECT", _) => Answer {
            status: 403,
            content_type: "text/plain",
            body: b"the qualification allows loopback only\n".to_vec(),
        },
        _ => Answer {
            status: 404,
            content_type: "application/json",
            body:
                br#"{"error":{"type":"not_found","message":"not served by the capture endpoint"}}"#
                    .to_vec(),
        },
    }
}

fn respond(request: Request, answer: Answer) {
    let mut response = Response::from_data(answer.body).with_status_code(answer.status);
    if let Ok(header) = Header::from_bytes("Content-Type", answer.content_type) {
        response = response.with_header(header);
    }
    // The CLI may already have given up; nothing to do about a failed answer.
    let _ = request.respond(response);
}

fn json_answer(value: &Value) -> Answer {
    Answer {
        status: 200,
        content_type: "application/json",
        body: value.to_string().into_bytes(),
    }
}

fn sse(events: &[(&str, Value)]) -> Answer {
    let mut body = String::new();
    for (name, data) in events {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    Answer {
        status: 200,
        content_type: "text/event-stream",
        body: body.into_bytes(),
    }
}

const REPLY: &str = "ok";

fn anthropic_message(model: &str, done: bool) -> Value {
    json!({
        "id": "msg_qualify", "type": "message", "role": "assistant", "model": model,
        "content": if done { json!([{"type": "text", "text": REPLY}]) } else { json!([]) },
        "stop_reason": if done { json!("end_turn") } else { Value::Null },
        "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1}
    })
}

fn anthropic_events(model: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "message_start",
            json!({"type": "message_start", "message": anthropic_message(model, false)}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": REPLY}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 1}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn responses_events(model: &str) -> Vec<(&'static str, Value)> {
    let item = json!({
        "type": "message", "id": "msg_qualify", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": REPLY, "annotations": []}]
    });
    let response = |status: &str, output: Value| {
        json!({
            "id": "resp_qualify", "object": "response", "created_at": 0, "status": status,
            "model": model, "output": output,
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}
        })
    };
    vec![
        (
            "response.created",
            json!({"type": "response.created", "response": response("in_progress", json!([]))}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": response("completed", json!([item]))}),
        ),
    ]
}

fn chat_chunk(model: &str) -> Value {
    json!({
        "id": "chat_qualify", "object": "chat.completion.chunk", "created": 0, "model": model,
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}]
    })
}

/// A whole `GenerateContentResponse`: one candidate saying [`REPLY`], finished.
fn gemini_response() -> Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [{"text": REPLY}]},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "qualify"
    })
}

/// The `--quick` self-test: a fake client speaks each API (and a chunked upload, and a stray
/// `CONNECT`) to a fresh endpoint over real TCP; every request must be recorded whole and every
/// answer must end the way the API ends. Returns one `(check, passed)` per exchange.
pub fn self_test() -> Result<Vec<(String, bool)>> {
    let capture = Capture::start()?;
    let marker = "QUALIFY-SELF-TEST-MARKER";
    let body = |stream: bool| json!({"model": "m", "stream": stream, "system": marker}).to_string();
    let exchanges: Vec<(&str, &str, String, bool, &str)> = vec![
        (
            "anthropic messages, streaming",
            "/v1/messages?beta=true",
            body(true),
            false,
            "event: message_stop",
        ),
        (
            "anthropic messages, json",
            "/v1/messages",
            body(false),
            false,
            "\"end_turn\"",
        ),
        (
            "openai responses, sse",
            "/v1/responses",
            body(true),
            false,
            "event: response.completed",
        ),
        (
            "openai responses, chunked upload",
            "/v1/responses",
            body(true),
            true,
            "event: response.completed",
        ),
        (
            "chat completions, sse",
            "/v1/chat/completions",
            body(true),
            false,
            "data: [DONE]",
        ),
        (
            "gemini streamGenerateContent, sse",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            body(true),
            false,
            "\"finishReason\":\"STOP\"",
        ),
        (
            "gemini generateContent, json",
            "/v1beta/models/gemini-2.5-flash:generateContent",
            body(false),
            true,
            "\"finishReason\":\"STOP\"",
        ),
        (
            "gemini countTokens",
            "/v1beta/models/gemini-2.5-flash:countTokens",
            body(false),
            false,
            "\"totalTokens\":1",
        ),
    ];
    let mut results = Vec::new();
    for (name, path, body, chunked, ending) in exchanges {
        let reply = fake_client::post(capture.port(), path, &body, chunked)?;
        let recorded = capture.drain();
        let passed = reply.starts_with("HTTP/1.1 200")
            && reply.contains(ending)
            && recorded.len() == 1
            && recorded[0].body == body
            && recorded[0].is_model_call();
        results.push((name.to_string(), passed));
    }
    let reply = fake_client::connect(capture.port(), "example.invalid:443")?;
    let recorded = capture.drain();
    results.push((
        "stray CONNECT refused and recorded".to_string(),
        reply.starts_with("HTTP/1.1 403") && recorded.len() == 1 && !recorded[0].is_model_call(),
    ));
    Ok(results)
}

/// A minimal HTTP/1.1 client over `std::net`, for the self-test only: it writes a request with
/// `Connection: close` and reads the answer to the end.
mod fake_client {
    use std::io::{Read as _, Write as _};
    use std::net::TcpStream;
    use std::time::Duration;

    use anyhow::{Context as _, Result};

    fn exchange(port: u16, request: &[u8]) -> Result<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", port))
            .with_context(|| format!("127.0.0.1:{port}: cannot connect"))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.write_all(request)?;
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply)?;
        Ok(String::from_utf8_lossy(&reply).into_owned())
    }

    pub fn post(port: u16, path: &str, body: &str, chunked: bool) -> Result<String> {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nConnection: close\r\n"
        );
        if chunked {
            let (a, b) = body.split_at(body.len() / 2);
            request.push_str("Transfer-Encoding: chunked\r\n\r\n");
            for part in [a, b] {
                request.push_str(&format!("{:x}\r\n{part}\r\n", part.len()));
            }
            request.push_str("0\r\n\r\n");
        } else {
            request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        }
        exchange(port, request.as_bytes())
    }

    pub fn connect(port: u16, target: &str) -> Result<String> {
        let request =
            format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n");
        exchange(port, request.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_records_and_answers_every_api() -> Result<()> {
        let results = self_test()?;
        assert_eq!(results.len(), 9, "{results:?}");
        for (name, passed) in results {
            assert!(passed, "{name}");
        }
        Ok(())
    }

    #[test]
    fn paths_map_to_their_api() {
        assert_eq!(
            api_of("/v1/messages?beta=true"),
            Some(Api::AnthropicMessages)
        );
        assert_eq!(api_of("/v1/responses"), Some(Api::OpenAiResponses));
        assert_eq!(
            api_of("/api/v1/chat/completions/"),
            Some(Api::ChatCompletions)
        );
        assert_eq!(api_of("/v1/models"), None);
        assert_eq!(
            api_of("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
            Some(Api::GeminiStream)
        );
        assert_eq!(
            api_of("/v1beta/models/m:generateContent"),
            Some(Api::GeminiGenerate)
        );
        assert_eq!(
            api_of("/v1beta/models/m:countTokens"),
            Some(Api::GeminiCountTokens)
        );
        assert_eq!(api_of("/v1beta/models/m:embedContent"), None);
        assert_eq!(api_of("/v1beta/tunedModels/m:generateContent"), None);
    }
}

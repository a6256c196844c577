//! The official conformance suite's fixture content, as a [`Catalog`]:
//! the tools, resources and prompts its server scenarios call
//! (`@modelcontextprotocol/conformance`, `src/scenarios/server/*.ts`,
//! modelled on its reference server `examples/servers/typescript/
//! everything-server.ts`).
//!
//! Everything a fixture does to the client goes through the protocol
//! layer's [`Call`], so the same fixture behaves as each revision
//! defines it: `test_sampling` sends `sampling/createMessage` on the
//! request's stream in a session-based revision and answers
//! input-required in 2026-07-28.

use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use alayasiki_mcp::protocol::call::Call;
use alayasiki_mcp::protocol::catalog::{Catalog, Feature};
use alayasiki_mcp::protocol::jsonrpc::{INVALID_PARAMS, RESOURCE_NOT_FOUND};
use alayasiki_mcp::protocol::mcp::Fault;
use alayasiki_mcp::protocol::ordering::Kind;
use alayasiki_mcp::protocol::revision::{Revision, MISSING_REQUIRED_CLIENT_CAPABILITY};
use alayasiki_mcp::service::Memory;

/// A 1x1 red PNG.
pub const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
pub const AUDIO: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The pause between a fixture's notifications (the suite's fixtures
/// space them ~50 ms apart, to show they arrive during the call).
const STEP: Duration = Duration::from_millis(50);

/// The suite's fixtures.
#[derive(Default)]
pub struct Fixtures {
    subscriptions: Mutex<BTreeSet<String>>,
}

fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

fn string_arg(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// SEP-1613 / SEP-2106: a 2020-12 schema whose keywords must survive
/// `tools/list` as written.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// Every tool: name, description, input schema.
fn tool_table() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "test_simple_text",
            "Tests simple text content response",
            empty_schema(),
        ),
        (
            "test_image_content",
            "Tests image content response",
            empty_schema(),
        ),
        (
            "test_audio_content",
            "Tests audio content response",
            empty_schema(),
        ),
        (
            "test_embedded_resource",
            "Tests embedded resource content response",
            empty_schema(),
        ),
        (
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            empty_schema(),
        ),
        (
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
            empty_schema(),
        ),
        (
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
            empty_schema(),
        ),
        (
            "test_error_handling",
            "Tests error response handling",
            empty_schema(),
        ),
        (
            "test_reconnection",
            "Tests SSE stream disconnection and client reconnection (SEP-1699): the server \
             closes the stream mid-call and the result arrives once the client resumes it",
            empty_schema(),
        ),
        (
            "test_sampling",
            "Tests server-initiated sampling (LLM completion request)",
            json!({"type": "object",
                   "properties": {"prompt": string_arg("The prompt to send to the LLM")},
                   "required": ["prompt"]}),
        ),
        (
            "test_elicitation",
            "Tests server-initiated elicitation (user input request)",
            json!({"type": "object",
                   "properties": {"message": string_arg("The message to show the user")},
                   "required": ["message"]}),
        ),
        (
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034",
            empty_schema(),
        ),
        (
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330",
            empty_schema(),
        ),
        (
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            json_schema_2020_12(),
        ),
        (
            "test_header_param",
            "Tests a parameter mirrored into an HTTP header (SEP-2243 x-mcp-header)",
            json!({"type": "object",
                   "properties": {"region": {"type": "string", "x-mcp-header": "Region",
                                             "description": "Echoed back"}},
                   "required": ["region"]}),
        ),
        (
            "test_missing_capability",
            "Test tool requiring sampling",
            empty_schema(),
        ),
        (
            "test_streaming_elicitation",
            "Diagnostic tool: asks for elicitation on the request's own stream",
            empty_schema(),
        ),
        (
            "test_logging_tool",
            "Diagnostic logging validator tool",
            empty_schema(),
        ),
        (
            "test_input_required_result_elicitation",
            "MRTR: returns InputRequiredResult with elicitation request",
            empty_schema(),
        ),
        (
            "test_input_required_result_sampling",
            "MRTR: returns InputRequiredResult with sampling request",
            empty_schema(),
        ),
        (
            "test_input_required_result_list_roots",
            "MRTR: returns InputRequiredResult with roots/list request",
            empty_schema(),
        ),
        (
            "test_input_required_result_request_state",
            "MRTR: returns InputRequiredResult with requestState",
            empty_schema(),
        ),
        (
            "test_input_required_result_multiple_inputs",
            "MRTR: returns InputRequiredResult with multiple input requests",
            empty_schema(),
        ),
        (
            "test_input_required_result_multi_round",
            "MRTR: multi-round InputRequiredResult workflow",
            empty_schema(),
        ),
        (
            "test_input_required_result_tampered_state",
            "MRTR: HMAC-signed requestState integrity test",
            empty_schema(),
        ),
        (
            "test_input_required_result_capabilities",
            "MRTR: respects client capabilities in inputRequests",
            empty_schema(),
        ),
    ]
}

fn text(t: impl Into<String>) -> Value {
    json!({"type": "text", "text": t.into()})
}

fn content(items: Vec<Value>) -> Value {
    json!({"content": items, "isError": false})
}

fn elicit(message: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties, "required": required}
    })
}

fn sample(prompt: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens
    })
}

/// An elicitation answer's `content[field]` as text.
fn answered(answer: &Value, field: &str) -> String {
    answer["content"][field]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| answer["content"][field].to_string())
}

fn string_param<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, Fault> {
    args.get(name).and_then(Value::as_str).ok_or_else(|| {
        Fault::new(
            INVALID_PARAMS,
            format!("missing required argument: {name} (a string)"),
        )
    })
}

impl Fixtures {
    fn tool(&self, call: &Call<'_>, name: &str, args: &Map<String, Value>) -> Result<Value, Fault> {
        match name {
            "test_simple_text" => Ok(content(vec![text(
                "This is a simple text response for testing.",
            )])),
            "test_image_content" => Ok(content(vec![
                json!({"type": "image", "data": IMAGE, "mimeType": "image/png"}),
            ])),
            "test_audio_content" => Ok(content(vec![
                json!({"type": "audio", "data": AUDIO, "mimeType": "audio/wav"}),
            ])),
            "test_embedded_resource" => Ok(content(vec![json!({
                "type": "resource",
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content."
                }
            })])),
            "test_multiple_content_types" => Ok(content(vec![
                text("Multiple content types test:"),
                json!({"type": "image", "data": IMAGE, "mimeType": "image/png"}),
                json!({
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": json!({"test": "data", "value": 123}).to_string()
                    }
                }),
            ])),
            "test_tool_with_logging" => {
                for (i, line) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .iter()
                .enumerate()
                {
                    if i > 0 {
                        std::thread::sleep(STEP);
                    }
                    call.log("info", Some("conformance-fixtures"), json!(line));
                }
                Ok(content(vec![text(
                    "Tool with logging executed successfully",
                )]))
            }
            "test_tool_with_progress" => {
                for (i, step) in [0.0, 50.0, 100.0].iter().enumerate() {
                    if i > 0 {
                        std::thread::sleep(STEP);
                    }
                    let message = format!("Completed step {step} of 100");
                    call.progress(*step, Some(100.0), Some(&message));
                }
                let token = call.progress_token().map(|t| match t {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                Ok(content(vec![text(token.unwrap_or_else(|| "0".into()))]))
            }
            "test_error_handling" => Ok(json!({
                "content": [text("This tool intentionally returns an error for testing")],
                "isError": true
            })),
            "test_reconnection" => {
                // The stream closes now; the result waits for the client to
                // resume it with Last-Event-ID.
                call.end_stream();
                std::thread::sleep(Duration::from_millis(100));
                Ok(content(vec![text(
                    "Reconnection test completed successfully. If you received this, the \
                     client properly reconnected after stream closure.",
                )]))
            }
            "test_sampling" => {
                let prompt = string_param(args, "prompt")?;
                let answer = call.ask("sampling", "sampling/createMessage", sample(prompt, 100))?;
                let said = answer["content"]["text"].as_str().unwrap_or("No response");
                Ok(content(vec![text(format!("LLM response: {said}"))]))
            }
            "test_elicitation" => {
                let message = string_param(args, "message")?;
                let schema = elicit(
                    message,
                    json!({"response": {"type": "string", "description": "User's response"}}),
                    &["response"],
                );
                let answer = call.ask("elicitation", "elicitation/create", schema)?;
                Ok(content(vec![text(elicited("User response", &answer))]))
            }
            "test_elicitation_sep1034_defaults" => {
                let schema = elicit(
                    "Please review and update the form fields with defaults",
                    json!({
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status",
                                   "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verification status",
                                     "default": true}
                    }),
                    &[],
                );
                let answer = call.ask("form", "elicitation/create", schema)?;
                Ok(content(vec![text(elicited(
                    "Elicitation completed",
                    &answer,
                ))]))
            }
            "test_elicitation_sep1330_enums" => {
                let schema = elicit(
                    "Please select options from the enum fields",
                    json!({
                        "untitledSingle": {"type": "string", "description": "Select one option",
                                           "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string",
                                         "description": "Select one option with titles",
                                         "oneOf": [{"const": "value1", "title": "First Option"},
                                                   {"const": "value2", "title": "Second Option"},
                                                   {"const": "value3", "title": "Third Option"}]},
                        "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                                       "enum": ["opt1", "opt2", "opt3"],
                                       "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "description": "Select multiple options",
                                          "minItems": 1, "maxItems": 3,
                                          "items": {"type": "string",
                                                    "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array",
                                        "description": "Select multiple options with titles",
                                        "minItems": 1, "maxItems": 3,
                                        "items": {"anyOf": [
                                            {"const": "value1", "title": "First Choice"},
                                            {"const": "value2", "title": "Second Choice"},
                                            {"const": "value3", "title": "Third Choice"}]}}
                    }),
                    &[],
                );
                let answer = call.ask("choices", "elicitation/create", schema)?;
                Ok(content(vec![text(elicited(
                    "Elicitation completed",
                    &answer,
                ))]))
            }
            "json_schema_2020_12_tool" => Ok(content(vec![text(format!(
                "JSON Schema 2020-12 tool called with: {}",
                Value::Object(args.clone())
            ))])),
            "test_header_param" => {
                let region = string_param(args, "region")?;
                Ok(content(vec![text(format!("region: {region}"))]))
            }
            "test_missing_capability" => {
                if !call.client_supports("sampling") {
                    return Err(Fault::new(
                        MISSING_REQUIRED_CLIENT_CAPABILITY,
                        "test_missing_capability needs the client capability \"sampling\"",
                    )
                    .with_data(json!({"requiredCapabilities": {"sampling": {}}})));
                }
                Ok(content(vec![text("Success")]))
            }
            "test_streaming_elicitation" => {
                call.progress(50.0, Some(100.0), Some("asking for input"));
                let answer = call.ask(
                    "confirm",
                    "elicitation/create",
                    elicit("Continue?", json!({"ok": {"type": "boolean"}}), &["ok"]),
                )?;
                Ok(content(vec![text(format!(
                    "Streaming complete: {}",
                    answer["action"].as_str().unwrap_or("?")
                ))]))
            }
            "test_logging_tool" => {
                call.log(
                    "info",
                    Some("conformance-fixtures"),
                    json!("Diagnostic trace logging activated"),
                );
                Ok(content(vec![text("Logging evaluated")]))
            }
            "test_input_required_result_elicitation" => {
                let answer = call.ask(
                    "user_name",
                    "elicitation/create",
                    elicit(
                        "What is your name?",
                        json!({"name": {"type": "string"}}),
                        &["name"],
                    ),
                )?;
                Ok(content(vec![text(format!(
                    "Hello, {}!",
                    answered(&answer, "name")
                ))]))
            }
            "test_input_required_result_sampling" => {
                let answer = call.ask(
                    "sample_request",
                    "sampling/createMessage",
                    sample("What is the capital of France?", 100),
                )?;
                let said = answer["content"]["text"].as_str().unwrap_or("no response");
                Ok(content(vec![text(format!("Sampling result: {said}"))]))
            }
            "test_input_required_result_list_roots" => {
                let answer = call.ask("roots_request", "roots/list", json!({}))?;
                let n = answer["roots"].as_array().map_or(0, Vec::len);
                Ok(content(vec![text(format!("Found {n} root(s)"))]))
            }
            "test_input_required_result_request_state" => {
                call.carry(json!({"kind": "request-state"}));
                let answer = call.ask(
                    "confirm",
                    "elicitation/create",
                    elicit(
                        "Please confirm",
                        json!({"ok": {"type": "boolean"}}),
                        &["ok"],
                    ),
                )?;
                if call.state() != Some(&json!({"kind": "request-state"})) {
                    return Err(Fault::new(
                        INVALID_PARAMS,
                        "the retry must carry the requestState of the first round",
                    ));
                }
                Ok(content(vec![text(format!(
                    "state-ok: requestState validated (ok={})",
                    answer["content"]["ok"]
                ))]))
            }
            "test_input_required_result_multiple_inputs" => {
                call.carry(json!({"kind": "multiple-inputs"}));
                let answers = call.ask_all(vec![
                    (
                        "user_name",
                        "elicitation/create",
                        elicit(
                            "What is your name?",
                            json!({"name": {"type": "string"}}),
                            &["name"],
                        ),
                    ),
                    (
                        "greeting",
                        "sampling/createMessage",
                        sample("Generate a greeting", 50),
                    ),
                    ("client_roots", "roots/list", json!({})),
                ])?;
                Ok(content(vec![text(format!(
                    "Name: {}; Greeting: {}; Roots: {}",
                    answered(&answers[0], "name"),
                    answers[1]["content"]["text"]
                        .as_str()
                        .unwrap_or("Hello there!"),
                    answers[2]["roots"].as_array().map_or(0, Vec::len)
                ))]))
            }
            "test_input_required_result_multi_round" => {
                let round = call.state().and_then(|s| s["round"].as_u64()).unwrap_or(0);
                let step1 = || {
                    call.carry(json!({"round": 1}));
                    call.ask(
                        "step1",
                        "elicitation/create",
                        elicit(
                            "Step 1: What is your name?",
                            json!({"name": {"type": "string"}}),
                            &["name"],
                        ),
                    )
                };
                let step2 = |name: &str| {
                    call.carry(json!({"round": 2, "name": name}));
                    call.ask(
                        "step2",
                        "elicitation/create",
                        elicit(
                            "Step 2: What is your favorite color?",
                            json!({"color": {"type": "string"}}),
                            &["color"],
                        ),
                    )
                };
                let (name, color) = if round == 2 {
                    let name = call
                        .state()
                        .and_then(|s| s["name"].as_str())
                        .unwrap_or("friend");
                    (name.to_string(), answered(&step2(name)?, "color"))
                } else {
                    let name = answered(&step1()?, "name");
                    let color = answered(&step2(&name)?, "color");
                    (name, color)
                };
                Ok(content(vec![text(format!(
                    "Multi-round complete for {name} who likes {color}"
                ))]))
            }
            "test_input_required_result_tampered_state" => {
                call.carry(json!({"kind": "tamper-test"}));
                call.ask(
                    "confirm",
                    "elicitation/create",
                    elicit(
                        "Please confirm",
                        json!({"ok": {"type": "boolean"}}),
                        &["ok"],
                    ),
                )?;
                Ok(content(vec![text("integrity-ok: state verified")]))
            }
            "test_input_required_result_capabilities" => {
                let mut asks = Vec::new();
                if call.client_supports("elicitation") {
                    asks.push((
                        "elicit_input",
                        "elicitation/create",
                        elicit(
                            "Elicitation input",
                            json!({"value": {"type": "string"}}),
                            &["value"],
                        ),
                    ));
                }
                if call.client_supports("sampling") {
                    asks.push((
                        "sample_input",
                        "sampling/createMessage",
                        sample("Sample request", 50),
                    ));
                }
                if asks.is_empty() {
                    return Ok(content(vec![text("No supported capabilities declared")]));
                }
                let keys: Vec<&str> = asks.iter().map(|(k, _, _)| *k).collect();
                let keys = keys.join(",");
                call.carry(json!({"kind": "capabilities-test"}));
                call.ask_all(asks)?;
                Ok(content(vec![text(format!(
                    "capabilities-ok: received {keys}"
                ))]))
            }
            _ => Err(Fault::new(INVALID_PARAMS, format!("unknown tool: {name}"))),
        }
    }
}

const TEMPLATE_PREFIX: &str = "test://template/";
const TEMPLATE_SUFFIX: &str = "/data";

fn static_resources() -> Vec<Value> {
    vec![
        json!({"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource",
               "description": "A static text resource for testing", "mimeType": "text/plain"}),
        json!({"uri": "test://static-binary", "name": "static-binary",
               "title": "Static Binary Resource",
               "description": "A static binary resource (image) for testing",
               "mimeType": "image/png"}),
        json!({"uri": "test://watched-resource", "name": "watched-resource",
               "title": "Watched Resource",
               "description": "A resource clients may subscribe to", "mimeType": "text/plain"}),
    ]
}

fn prompt_table() -> Vec<Value> {
    let arg = |name: &str, description: &str| json!({"name": name, "description": description, "required": true});
    vec![
        json!({"name": "test_simple_prompt", "title": "Simple Test Prompt",
               "description": "A simple prompt without arguments"}),
        json!({"name": "test_prompt_with_arguments", "title": "Prompt With Arguments",
               "description": "A prompt with required arguments",
               "arguments": [arg("arg1", "First test argument"),
                             arg("arg2", "Second test argument")]}),
        json!({"name": "test_prompt_with_embedded_resource",
               "title": "Prompt With Embedded Resource",
               "description": "A prompt that includes an embedded resource",
               "arguments": [arg("resourceUri", "URI of the resource to embed")]}),
        json!({"name": "test_prompt_with_image", "title": "Prompt With Image",
               "description": "A prompt that includes image content"}),
        json!({"name": "test_input_required_result_prompt",
               "description": "MRTR: prompt that requires elicitation input"}),
    ]
}

fn user(content: Value) -> Value {
    json!({"role": "user", "content": content})
}

impl Catalog for Fixtures {
    fn server_info(&self) -> Value {
        json!({"name": "alayasiki-conformance-fixtures", "version": env!("CARGO_PKG_VERSION")})
    }

    fn instructions(&self) -> Option<&str> {
        Some("The official MCP conformance suite's fixtures, served by alayasiki's protocol and transport code.")
    }

    fn supports(&self, feature: Feature) -> bool {
        matches!(feature, Feature::Completion | Feature::Subscriptions)
    }

    fn tool_kind(&self, _name: &str, _arguments: Option<&Value>) -> Kind {
        // No fixture touches stored memory.
        Kind::Read
    }

    fn tools(&self, _revision: Revision) -> Vec<Value> {
        tool_table()
            .into_iter()
            .map(|(name, description, schema)| {
                json!({"name": name, "description": description, "inputSchema": schema})
            })
            .collect()
    }

    fn call_tool(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Fault::new(INVALID_PARAMS, "tools/call needs name (a string)"))?;
        let empty = Map::new();
        let args = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(a)) => a,
            Some(_) => return Err(Fault::new(INVALID_PARAMS, "arguments must be an object")),
        };
        self.tool(call, name, args)
    }

    fn resources(&self, _memory: &Memory<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        if !matches!(params.get("cursor"), None | Some(Value::Null)) {
            return Err(Fault::new(INVALID_PARAMS, "invalid cursor"));
        }
        Ok(json!({"resources": static_resources()}))
    }

    fn resource_templates(&self) -> Vec<Value> {
        vec![json!({
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "title": "Resource Template",
            "description": "A resource template with parameter substitution",
            "mimeType": "application/json"
        })]
    }

    fn read_resource(&self, _call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        let Some(Value::String(uri)) = params.get("uri") else {
            return Err(Fault::new(
                INVALID_PARAMS,
                "resources/read needs uri (a string)",
            ));
        };
        let one = |mime: &str, body: (&str, Value)| {
            let mut c = json!({"uri": uri, "mimeType": mime});
            c[body.0] = body.1;
            Ok(json!({"contents": [c]}))
        };
        match uri.as_str() {
            "test://static-text" => one(
                "text/plain",
                (
                    "text",
                    json!("This is the content of the static text resource."),
                ),
            ),
            "test://static-binary" => one("image/png", ("blob", json!(IMAGE))),
            "test://watched-resource" => {
                one("text/plain", ("text", json!("Watched resource content")))
            }
            _ => {
                let id = uri
                    .strip_prefix(TEMPLATE_PREFIX)
                    .and_then(|rest| rest.strip_suffix(TEMPLATE_SUFFIX))
                    .filter(|id| !id.is_empty() && !id.contains('/'));
                match id {
                    Some(id) => one(
                        "application/json",
                        (
                            "text",
                            json!(json!({"id": id, "templateTest": true,
                                         "data": format!("Data for ID: {id}")})
                            .to_string()),
                        ),
                    ),
                    None => Err(Fault::new(RESOURCE_NOT_FOUND, "Resource not found")
                        .with_data(json!({"uri": uri}))),
                }
            }
        }
    }

    fn subscribe(&self, _call: &Call<'_>, uri: &str, on: bool) -> Result<(), Fault> {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        if on {
            subscriptions.insert(uri.to_string());
        } else {
            subscriptions.remove(uri);
        }
        Ok(())
    }

    fn prompts(&self) -> Vec<Value> {
        prompt_table()
    }

    fn get_prompt(&self, call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        let name = params.get("name").and_then(Value::as_str).unwrap_or("");
        let empty = Map::new();
        let args = params
            .get("arguments")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let messages = match name {
            "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
            "test_prompt_with_arguments" => {
                let (a, b) = (string_param(args, "arg1")?, string_param(args, "arg2")?);
                vec![user(text(format!(
                    "Prompt with arguments: arg1='{a}', arg2='{b}'"
                )))]
            }
            "test_prompt_with_embedded_resource" => {
                let uri = string_param(args, "resourceUri")?;
                vec![
                    user(json!({"type": "resource", "resource": {
                        "uri": uri, "mimeType": "text/plain",
                        "text": "Embedded resource content for testing."}})),
                    user(text("Please process the embedded resource above.")),
                ]
            }
            "test_prompt_with_image" => vec![
                user(json!({"type": "image", "data": IMAGE, "mimeType": "image/png"})),
                user(text("Please analyze the image above.")),
            ],
            "test_input_required_result_prompt" => {
                let answer = call.ask(
                    "user_context",
                    "elicitation/create",
                    elicit(
                        "What context should the prompt use?",
                        json!({"context": {"type": "string"}}),
                        &["context"],
                    ),
                )?;
                vec![user(text(format!(
                    "Prompt with context: {}",
                    answered(&answer, "context")
                )))]
            }
            _ => {
                return Err(Fault::new(
                    INVALID_PARAMS,
                    format!("unknown prompt: {name}"),
                ))
            }
        };
        Ok(json!({"messages": messages}))
    }

    fn complete(&self, _call: &Call<'_>, params: &Map<String, Value>) -> Result<Value, Fault> {
        let Some(reference) = params.get("ref").and_then(Value::as_object) else {
            return Err(Fault::new(
                INVALID_PARAMS,
                "completion/complete needs ref (an object)",
            ));
        };
        let Some(typ) = reference.get("type").and_then(Value::as_str) else {
            return Err(Fault::new(INVALID_PARAMS, "ref needs type (a string)"));
        };
        if !matches!(typ, "ref/prompt" | "ref/resource") {
            return Err(Fault::new(
                INVALID_PARAMS,
                format!("unknown ref type: {typ}"),
            ));
        }
        let value = params
            .get("argument")
            .and_then(|a| a.get("value"))
            .and_then(Value::as_str)
            .unwrap_or("");
        // A few suggestions for prompt arguments, by prefix.
        let values: Vec<&str> = ["test", "testValue1", "testValue2", "example"]
            .into_iter()
            .filter(|v| typ == "ref/prompt" && v.starts_with(value))
            .collect();
        Ok(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }
}

/// What an elicitation fixture says of the client's answer.
fn elicited(what: &str, answer: &Value) -> String {
    format!(
        "{what}: action={}, content={}",
        answer["action"].as_str().unwrap_or("?"),
        answer.get("content").cloned().unwrap_or(json!({}))
    )
}

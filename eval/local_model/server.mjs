// A small OpenAI-compatible /v1/chat/completions server around node-llama-cpp (CPU), for eval/local_model.py.
//
//   node server.mjs --model FILE.gguf [--port 0] [--host 127.0.0.1] [--threads 1] [--context 4096] [--log FILE [--log-text]]
//
// Prints "READY http://127.0.0.1:<port>/v1" once the model is loaded. Listens on loopback only. One request at
// a time (a queue): the KV cache of the previous prompt is reused for the common prefix (the system prompt),
// so only the new turns are evaluated. response_format: {"type": "json_object"} constrains decoding with a
// JSON grammar, {"type": "json_schema", "json_schema": {"schema": ...}} with a grammar made from the schema;
// anything else is free text. Usage counts come from the model's tokenizer. Nothing is downloaded: the model
// file and node-llama-cpp's prebuilt CPU binary must already be on disk.
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import process from "node:process";
import {getLlama, LlamaChat} from "node-llama-cpp";

function arg(name, fallback) {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const modelPath = arg("model");
if (!modelPath) {
    console.error("usage: node server.mjs --model FILE.gguf [--port 0] [--threads 2] [--context 4096]");
    process.exit(2);
}
const host = arg("host", "127.0.0.1");
if (!["127.0.0.1", "localhost", "::1"].includes(host)) {
    console.error("this server listens on loopback only");
    process.exit(2);
}
const threads = Number(arg("threads", "1"));
const contextSize = Number(arg("context", "4096"));
const modelName = arg("name", "local");
const logPath = arg("log");  // one JSON line per request: time, tokens, finish, the prompt's key
const logText = process.argv.includes("--log-text");  // ... and the reply, for eval/distill.py --replay

const llama = await getLlama({gpu: false, build: "never", progressLogs: false, logLevel: "error"});
const model = await llama.loadModel({modelPath});
const countPath = arg("count");  // --count FILE: print the file's size in this model's tokens and exit
if (countPath) {
    process.stdout.write(`${model.tokenize(fs.readFileSync(countPath, "utf8")).length}\n`);
    process.exit(0);
}
const context = await model.createContext({contextSize, threads, sequences: 1});
const chat = new LlamaChat({contextSequence: context.getSequence()});
const jsonGrammar = await llama.getGrammarFor("json");
const schemaGrammars = new Map();

async function grammarFor(format) {
    if (!format || typeof format !== "object") return undefined;
    if (format.type === "json_object") return jsonGrammar;
    if (format.type === "json_schema" && format.json_schema && format.json_schema.schema) {
        const key = JSON.stringify(format.json_schema.schema);
        if (!schemaGrammars.has(key)) {
            try {
                schemaGrammars.set(key, await llama.createGrammarForJsonSchema(format.json_schema.schema));
            } catch (err) {
                // A schema feature the grammar builder does not know: plain JSON is the closest promise.
                console.error(`json_schema not supported (${err.message}); using the JSON grammar`);
                schemaGrammars.set(key, jsonGrammar);
            }
        }
        return schemaGrammars.get(key);
    }
    return undefined;
}

function text(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) return content.map((p) => (p && typeof p.text === "string" ? p.text : "")).join("");
    return "";
}

// The same key as eval/distill.py's replay: sha256 of role \x1f content, messages joined by \x1e.
function promptKey(messages) {
    const joined = messages.map((m) => `${m.role}\x1f${text(m.content)}`).join("\x1e");
    return crypto.createHash("sha256").update(joined, "utf8").digest("hex");
}

function history(messages) {
    const out = [];
    for (const m of messages) {
        const t = text(m.content);
        if (m.role === "system") out.push({type: "system", text: t});
        else if (m.role === "assistant") out.push({type: "model", response: [t]});
        else out.push({type: "user", text: t});
    }
    return out;
}

async function complete(body) {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const grammar = await grammarFor(body.response_format);
    const started = Date.now();
    const result = await chat.generateResponse(history(messages), {
        grammar,
        maxTokens: Number(body.max_tokens || body.max_completion_tokens || 1024),
        temperature: Number(body.temperature || 0),
        seed: 0,
    });
    const promptTokens = messages.reduce((n, m) => n + 4 + model.tokenize(text(m.content)).length, 0);
    const completionTokens = model.tokenize(result.response).length;
    const finish = result.metadata.stopReason === "maxTokens" ? "length" : "stop";
    if (logPath) {
        fs.appendFileSync(logPath, JSON.stringify({at: new Date(started).toISOString(), ms: Date.now() - started,
            prompt_tokens: promptTokens, completion_tokens: completionTokens, finish,
            format: body.response_format ? body.response_format.type : null, key: promptKey(messages),
            ...(logText ? {content: result.response} : {})}) + "\n");
    }
    return {
        id: `chatcmpl-${started}`, object: "chat.completion", created: Math.floor(started / 1000),
        model: body.model || modelName,
        choices: [{index: 0, message: {role: "assistant", content: result.response}, finish_reason: finish}],
        usage: {prompt_tokens: promptTokens, completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens},
        timing_ms: Date.now() - started,
    };
}

let queue = Promise.resolve();

function send(res, status, obj) {
    const data = Buffer.from(JSON.stringify(obj));
    res.writeHead(status, {"Content-Type": "application/json", "Content-Length": data.length});
    res.end(data);
}

const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url.replace(/\/$/, "").endsWith("/models")) {
        send(res, 200, {object: "list", data: [{id: modelName, object: "model"}]});
        return;
    }
    if (req.method !== "POST" || !req.url.replace(/\/$/, "").endsWith("/chat/completions")) {
        send(res, 404, {error: {type: "not_found", message: "only POST /v1/chat/completions"}});
        return;
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
        let body;
        try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
            send(res, 400, {error: {type: "invalid_request_error", message: "body is not JSON"}});
            return;
        }
        queue = queue.then(() => complete(body)).then(
            (reply) => send(res, 200, reply),
            (err) => send(res, 500, {error: {type: "server_error", message: String(err && err.message)}}),
        );
    });
});

server.listen(Number(arg("port", "0")), host, () => {
    const {port} = server.address();
    process.stdout.write(`READY http://${host}:${port}/v1\n`);
});

for (const sig of ["SIGTERM", "SIGINT"]) {
    process.on(sig, async () => {
        server.close();
        await context.dispose();
        await model.dispose();
        process.exit(0);
    });
}

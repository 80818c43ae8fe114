// Long programs in `codemode serve`, driven by the official TypeScript SDK client (@modelcontextprotocol/sdk).
//
//     node long_program_client.mjs SPEC_JSON
//
// SPEC_JSON: {"program": CODE, "stdio": {"command", "args", "env", "cwd"}, "url": HTTP_URL}. The script
// starts serve over stdio itself (as a host does) and connects twice to the HTTP server at URL (two MCP
// sessions), runs every part at once, and prints one JSON object: each answer as the SDK returned it
// (content, structuredContent, isError), the logging messages each client got, and the seconds the calls
// took by this process's clock. tests/integration/test_serve_background_ts.py asserts on it. Any failure
// (a refused schema, a request timeout, a program that never ends) exits 1 with the error on stderr.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const spec = JSON.parse(process.argv[2]);
const REQUEST = { timeout: 120_000 }; // a call may wait 60 s: longer than the SDK's 60 s default
const MAX_ANSWERS = 12;

/** A connected client that keeps the logging messages it gets; listTools first, so that the SDK knows each
 * tool's output schema and checks every structuredContent against it. */
async function connect(name, transport) {
  const client = new Client({ name, version: "1.0.0" });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (message) => {
    logs.push({ logger: message.params.logger ?? null, data: message.params.data });
  });
  await client.connect(transport);
  await client.listTools();
  return { client, logs };
}

function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, REQUEST);
}

function seconds(since) {
  return (performance.now() - since) / 1000;
}

function stillRunning(answer) {
  return ["running", "queued"].includes(answer.structuredContent?.status);
}

/** The first answer and every wait_execution answer after it, until the final record. */
async function untilEnd(client, first, waitS) {
  const answers = [first];
  while (stillRunning(answers.at(-1))) {
    if (answers.length >= MAX_ANSWERS) {
      throw new Error(`the program never ended: ${JSON.stringify(answers.at(-1))}`);
    }
    const ident = first.structuredContent.execution_id;
    answers.push(await call(client, "wait_execution", { execution_id: ident, wait_s: waitS }));
  }
  return answers;
}

/** The long program, answered "running" after 2 s, then waited for again until its end. */
async function inTheBackground(client) {
  const began = performance.now();
  const first = await call(client, "execute_python", { code: spec.program, wait_s: 2, timeout: 60 });
  const firstTookS = seconds(began);
  return { answers: await untilEnd(client, first, 8), first_took_s: firstTookS };
}

/** The same program waited for at length (its note may end a wait: then the client waits again), with a
 * progress token: the final answer, and the progress messages the first call got. */
async function inTheForeground(client) {
  const progress = [];
  const onprogress = (update) => progress.push(update.message ?? null);
  const args = { code: spec.program, wait_s: 45, timeout: 60 };
  const first = await client.callTool({ name: "execute_python", arguments: args }, undefined, {
    ...REQUEST,
    onprogress,
  });
  return { final: (await untilEnd(client, first, 45)).at(-1), progress };
}

/** Short programs started with wait_s=0 on a server with free places, one after another, each collected
 * with one wait: every run's answers. */
async function startedAtOnce(client) {
  const code = "import time\ntime.sleep(0.05)\n'started'";
  const runs = [];
  for (let i = 0; i < 10; i++) {
    const first = await call(client, "execute_python", { code, wait_s: 0 });
    runs.push(await untilEnd(client, first, 30));
  }
  return runs;
}

/** A note ends a long wait at once; then the client cancels the program. */
async function aNoteWakes(client) {
  const code = "import time\ntime.sleep(1)\nnotify('ready', rows=3)\ntime.sleep(30)";
  const began = performance.now();
  const first = await call(client, "execute_python", { code, wait_s: 20 });
  const tookS = seconds(began);
  const ident = first.structuredContent.execution_id;
  const cancelled = await call(client, "cancel_execution", { execution_id: ident });
  return { first, took_s: tookS, cancelled };
}

/** cancel_execution stops a program stuck in a slow call; the run is gone after. */
async function cancelStops(client) {
  const code =
    "count(label='made')\ntry:\n    slow_count(label='never', seconds=60)\nfinally:\n    print('cleaned')";
  const running = await call(client, "execute_python", { code, wait_s: 3, timeout: 120 });
  const ident = running.structuredContent.execution_id;
  const began = performance.now();
  const cancelled = await call(client, "cancel_execution", { execution_id: ident });
  const tookS = seconds(began);
  const gone = await call(client, "wait_execution", { execution_id: ident });
  return { running, cancelled, took_s: tookS, gone };
}

/** Another MCP session cannot list, wait on or cancel the owner's program; the owner can. */
async function ownersOnly(owner, other) {
  const code = "import time\nprint('mine')\ntime.sleep(30)";
  const started = await call(owner, "execute_python", { code, wait_s: 1 });
  const ident = started.structuredContent.execution_id;
  const seen = { started };
  seen.owner_list = await call(owner, "list_executions", {});
  seen.other_list = await call(other, "list_executions", {});
  seen.other_wait = await call(other, "wait_execution", { execution_id: ident, wait_s: 0 });
  seen.other_cancel = await call(other, "cancel_execution", { execution_id: ident });
  seen.owner_wait = await call(owner, "wait_execution", { execution_id: ident, wait_s: 0 });
  seen.owner_cancel = await call(owner, "cancel_execution", { execution_id: ident });
  return seen;
}

async function main() {
  const { command, args, env, cwd } = spec.stdio;
  const transport = new StdioClientTransport({ command, args, env, cwd, stderr: "inherit" });
  const url = new URL(spec.url);
  const [stdio, owner, other] = await Promise.all([
    connect("ts-stdio", transport),
    connect("ts-http-owner", new StreamableHTTPClientTransport(url)),
    connect("ts-http-other", new StreamableHTTPClientTransport(url)),
  ]);
  try {
    const parts = await Promise.all([
      inTheBackground(stdio.client),
      inTheForeground(stdio.client),
      inTheBackground(owner.client),
      aNoteWakes(owner.client),
      cancelStops(stdio.client),
      ownersOnly(owner.client, other.client),
      startedAtOnce(stdio.client),
      startedAtOnce(other.client),
    ]);
    const [stdioBackground, stdioForeground, httpBackground, noted, cancelled, isolated] = parts;
    const report = {
      sessions: [owner.client.transport?.sessionId ?? null, other.client.transport?.sessionId ?? null],
      stdio_background: stdioBackground,
      stdio_foreground: stdioForeground,
      http_background: httpBackground,
      note_wakes: noted,
      cancel: cancelled,
      owners_only: isolated,
      started_at_once: { stdio: parts[6], http: parts[7] },
      stdio_logs: stdio.logs,
    };
    process.stdout.write(JSON.stringify(report) + "\n");
  } finally {
    await Promise.all([stdio.client.close(), owner.client.close(), other.client.close()]);
  }
}

main().catch((error) => {
  console.error(error?.stack ?? String(error));
  process.exit(1);
});

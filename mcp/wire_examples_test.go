package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// This file holds our own wire examples: messages as a server or a client
// of each era might put them on the wire, written for these tests (a
// made-up harbour-management server, "lighthouse", and its client,
// "quayside"). They are pretty-printed with members in no particular
// order, as peers send them. Every example decodes into its Go type and
// re-encodes to the same JSON value (TestWireExamplesRoundTrip), with
// unknown members anywhere in it tolerated
// (TestWireExamplesTolerateUnknownMembers); the tests of the data model
// read their inputs from here.

// ---------------------------------------------------------------------
// 2025-11-25: the initialize handshake and the server features.

const legacyInitializeRequest = `{
  "id": 1,
  "jsonrpc": "2.0",
  "method": "initialize",
  "params": {
    "clientInfo": {
      "name": "quayside",
      "version": "3.4.1",
      "title": "Quayside Desktop",
      "description": "A harbour master's assistant",
      "websiteUrl": "https://quayside.example/",
      "icons": [
        {"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml", "sizes": ["any"], "theme": "dark"}
      ]
    },
    "protocolVersion": "2025-11-25",
    "capabilities": {
      "elicitation": {"url": {}, "form": {}},
      "sampling": {"tools": {}, "context": {}},
      "roots": {"listChanged": true},
      "tasks": {"requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}}},
      "experimental": {"example.quayside/tracing": {"sampleRate": 0.25}}
    },
    "_meta": {"progressToken": 11}
  }
}`

const legacyInitializeResult = `{
  "jsonrpc": "2.0",
  "result": {
    "serverInfo": {
      "version": "0.9.2",
      "name": "lighthouse",
      "title": "Lighthouse Port Data",
      "icons": [{"src": "https://lighthouse.example/icon-48.png", "mimeType": "image/png", "sizes": ["48x48", "96x96"], "theme": "light"}]
    },
    "instructions": "Berth numbers are strings such as \"Q3\"; always quote them.",
    "protocolVersion": "2025-11-25",
    "capabilities": {
      "tools": {"listChanged": true},
      "resources": {"listChanged": true, "subscribe": true},
      "prompts": {"listChanged": true},
      "logging": {},
      "completions": {},
      "tasks": {"cancel": {}, "list": {}, "requests": {"tools": {"call": {}}}},
      "experimental": {"example.lighthouse/tides": {}}
    },
    "_meta": {"example.lighthouse/build": "2f9c1e"}
  },
  "id": 1
}`

const legacyInitializedNotification = `{"method": "notifications/initialized", "jsonrpc": "2.0"}`

// legacyInitializeUnsupportedVersion is a legacy server refusing the
// client's version with -32602 and the same data 2026-07-28 gives -32022.
const legacyInitializeUnsupportedVersion = `{
  "jsonrpc": "2.0",
  "id": 1,
  "error": {
    "message": "Unsupported protocol version",
    "code": -32602,
    "data": {"requested": "2025-11-25", "supported": ["2025-03-26", "2024-11-05"]}
  }
}`

const legacyPingRequest = `{"jsonrpc": "2.0", "method": "ping", "id": "hb-3"}`

const legacyPingResult = `{"id": "hb-3", "result": {}, "jsonrpc": "2.0"}`

const legacyToolsListRequest = `{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "cGFnZS0y"}}`

// legacyToolsListResult has a task-capable tool first and a read-only one
// with an output schema second.
const legacyToolsListResult = `{
  "jsonrpc": "2.0",
  "id": 2,
  "result": {
    "tools": [
      {
        "name": "plan_dredging",
        "title": "Plan a dredging survey",
        "description": "Surveys a channel and proposes a dredging plan. Slow: may run as a task.",
        "inputSchema": {
          "type": "object",
          "properties": {
            "channel": {"type": "string", "enum": ["east", "west", "inner"]},
            "depthMetres": {"type": "number", "exclusiveMinimum": 0}
          },
          "required": ["channel"]
        },
        "execution": {"taskSupport": "optional"},
        "annotations": {"destructiveHint": false, "openWorldHint": true, "title": "Dredging planner"}
      },
      {
        "inputSchema": {
          "properties": {"berth": {"pattern": "^Q[1-8]$", "type": "string"}},
          "required": ["berth"],
          "type": "object",
          "additionalProperties": false
        },
        "name": "berth_status",
        "outputSchema": {
          "type": "object",
          "properties": {
            "occupied": {"type": "boolean"},
            "vessel": {"type": "string"},
            "draughtMetres": {"type": "number"}
          },
          "required": ["occupied"]
        },
        "annotations": {"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false, "openWorldHint": false},
        "execution": {"taskSupport": "forbidden"},
        "icons": [
          {"src": "https://lighthouse.example/berth.png", "mimeType": "image/png", "sizes": ["32x32"]},
          {"src": "https://lighthouse.example/berth-dark.svg", "mimeType": "image/svg+xml", "theme": "dark"}
        ],
        "_meta": {"example.lighthouse/costUnits": 1}
      }
    ],
    "nextCursor": "cGFnZS0z"
  }
}`

// legacyToolsCallTaskRequest asks for a task (2025-11-25 task
// augmentation).
const legacyToolsCallTaskRequest = `{
  "jsonrpc": "2.0",
  "id": 14,
  "method": "tools/call",
  "params": {
    "arguments": {"channel": "east", "depthMetres": 12.5},
    "name": "plan_dredging",
    "task": {"ttl": 90000},
    "_meta": {"progressToken": "dredge-14"}
  }
}`

// legacyToolsCallResult holds one content block of every type a tool may
// return, and structured content.
const legacyToolsCallResult = `{
  "jsonrpc": "2.0",
  "id": 21,
  "result": {
    "structuredContent": {"berth": "Q3", "occupied": true, "vessel": "MV Kestrel", "draughtMetres": 9.4},
    "content": [
      {
        "type": "text",
        "text": "Berth Q3 is occupied by MV Kestrel (draught 9.4 m).",
        "annotations": {"audience": ["user", "assistant"], "priority": 0.9}
      },
      {
        "mimeType": "image/png",
        "type": "image",
        "data": "iVBORw0KGgoAAAANSUhEUg==",
        "annotations": {"audience": ["user"], "lastModified": "2026-03-02T07:58:11Z"}
      },
      {"type": "audio", "data": "UklGRiQIAABXQVZFZm10IA==", "mimeType": "audio/wav"},
      {
        "type": "resource_link",
        "uri": "harbour://berths/Q3/log",
        "name": "q3-log",
        "title": "Berth Q3 movement log",
        "description": "Arrivals and departures, newest first",
        "mimeType": "text/csv",
        "size": 48213,
        "icons": [{"src": "https://lighthouse.example/csv.svg", "mimeType": "image/svg+xml"}]
      },
      {
        "type": "resource",
        "resource": {"uri": "harbour://berths/Q3/notice", "mimeType": "text/markdown", "text": "# Notice\nFenders replaced on 1 March."}
      },
      {
        "resource": {
          "blob": "JVBERi0xLjcK",
          "uri": "harbour://berths/Q3/permit.pdf",
          "mimeType": "application/pdf",
          "_meta": {"example.lighthouse/signed": true}
        },
        "type": "resource",
        "_meta": {"example.lighthouse/cached": false}
      }
    ],
    "_meta": {"example.lighthouse/elapsedMs": 37}
  }
}`

const legacyToolsCallError = `{
  "jsonrpc": "2.0",
  "id": 22,
  "result": {
    "isError": true,
    "content": [{"type": "text", "text": "berth \"Q9\" does not exist; valid berths are Q1 to Q8"}]
  }
}`

const legacyResourcesListResult = `{
  "jsonrpc": "2.0",
  "id": 3,
  "result": {
    "resources": [
      {
        "uri": "harbour://berths/Q3/log",
        "name": "q3-log",
        "title": "Berth Q3 movement log",
        "mimeType": "text/csv",
        "size": 48213,
        "annotations": {"audience": ["assistant"], "priority": 0.4, "lastModified": "2026-03-01T23:10:00Z"}
      },
      {
        "name": "tide-table",
        "uri": "harbour://tides/2026-03",
        "description": "High and low water for March",
        "icons": [{"src": "https://lighthouse.example/tide.png", "mimeType": "image/png"}],
        "_meta": {"example.lighthouse/region": "north"}
      }
    ],
    "nextCursor": "cmVzLTI="
  }
}`

const legacyResourceTemplatesListResult = `{
  "jsonrpc": "2.0",
  "id": 4,
  "result": {
    "resourceTemplates": [
      {
        "uriTemplate": "harbour://berths/{berth}/log",
        "name": "berth-log",
        "title": "Movement log of a berth",
        "description": "One CSV per berth",
        "mimeType": "text/csv",
        "annotations": {"priority": 0.2},
        "icons": [{"src": "https://lighthouse.example/csv.svg"}]
      }
    ]
  }
}`

const legacyResourcesReadRequest = `{"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "harbour://berths/Q3/log"}}`

const legacyResourcesReadResult = `{
  "jsonrpc": "2.0",
  "id": 5,
  "result": {
    "contents": [
      {"uri": "harbour://berths/Q3/log", "mimeType": "text/csv", "text": "time,vessel,event\n21:40,MV Kestrel,arrived\n"},
      {"uri": "harbour://berths/Q3/photo.gif", "mimeType": "image/gif", "blob": "R0lGODlhAQABAA=="},
      {"uri": "harbour://berths/Q3/empty.txt", "text": ""}
    ]
  }
}`

const legacyResourcesSubscribeRequest = `{"jsonrpc": "2.0", "id": 6, "method": "resources/subscribe", "params": {"uri": "harbour://tides/2026-03"}}`

const legacyResourceUpdatedNotification = `{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "harbour://tides/2026-03"}}`

const legacyResourceNotFound = `{
  "jsonrpc": "2.0",
  "id": 7,
  "error": {"code": -32002, "message": "No such resource", "data": {"uri": "harbour://berths/Q9/log"}}
}`

const legacyPromptsListResult = `{
  "jsonrpc": "2.0",
  "id": 8,
  "result": {
    "prompts": [
      {
        "name": "arrival_brief",
        "title": "Arrival briefing",
        "description": "Briefs the pilot on an arriving vessel",
        "arguments": [
          {"name": "vessel", "title": "Vessel name", "description": "As registered", "required": true},
          {"name": "language"}
        ],
        "icons": [{"src": "https://lighthouse.example/brief.png", "mimeType": "image/png", "sizes": ["64x64"]}]
      }
    ]
  }
}`

const legacyPromptsGetRequest = `{
  "jsonrpc": "2.0",
  "id": 9,
  "method": "prompts/get",
  "params": {"name": "arrival_brief", "arguments": {"vessel": "MV Kestrel", "language": "nl"}}
}`

const legacyPromptsGetResult = `{
  "jsonrpc": "2.0",
  "id": 9,
  "result": {
    "description": "Arrival briefing for MV Kestrel",
    "messages": [
      {"role": "user", "content": {"type": "text", "text": "Brief the pilot on MV Kestrel, in Dutch."}},
      {"role": "user", "content": {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUg==", "mimeType": "image/png"}},
      {
        "content": {"type": "resource", "resource": {"uri": "harbour://vessels/kestrel", "mimeType": "application/json", "text": "{\"lengthMetres\":142}"}},
        "role": "assistant"
      }
    ]
  }
}`

const legacyCompleteRequest = `{
  "jsonrpc": "2.0",
  "id": 10,
  "method": "completion/complete",
  "params": {
    "ref": {"type": "ref/prompt", "name": "arrival_brief"},
    "argument": {"name": "language", "value": "n"},
    "context": {"arguments": {"vessel": "MV Kestrel"}}
  }
}`

const legacyCompleteResult = `{
  "jsonrpc": "2.0",
  "id": 10,
  "result": {"completion": {"values": ["nl", "nb", "nn"], "total": 7, "hasMore": true}}
}`

const legacySetLevelRequest = `{"jsonrpc": "2.0", "id": 11, "method": "logging/setLevel", "params": {"level": "notice"}}`

const legacyLogMessage = `{
  "jsonrpc": "2.0",
  "method": "notifications/message",
  "params": {
    "level": "error",
    "logger": "lighthouse.sonar",
    "data": {"unit": "sonar-2", "error": "no echo within 400 ms", "retries": 3}
  }
}`

const legacyProgressNotification = `{
  "jsonrpc": "2.0",
  "method": "notifications/progress",
  "params": {"progressToken": "dredge-14", "progress": 2.5, "total": 8, "message": "Surveyed 2.5 of 8 km"}
}`

const legacyCancelledNotification = `{
  "jsonrpc": "2.0",
  "method": "notifications/cancelled",
  "params": {"requestId": 14, "reason": "The harbour master closed the planner."}
}`

// legacyRootsListRequest is a server-to-client request.
const legacyRootsListRequest = `{"jsonrpc": "2.0", "id": "srv-roots-1", "method": "roots/list"}`

const legacyRootsListResult = `{
  "jsonrpc": "2.0",
  "id": "srv-roots-1",
  "result": {
    "roots": [
      {"uri": "file:///srv/harbour/bookings", "name": "Bookings"},
      {"uri": "file:///home/ops/charts", "_meta": {"example.quayside/readOnly": true}}
    ]
  }
}`

const legacyRootsListChanged = `{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}`

// legacySamplingRequest asks for a message with single-block contents of
// three kinds.
const legacySamplingRequest = `{
  "params": {
    "messages": [
      {"content": {"type": "text", "text": "Summarise tonight's arrivals in one sentence."}, "role": "user"},
      {"role": "assistant", "content": {"type": "text", "text": "Three arrivals, all before midnight."}},
      {"role": "user", "content": {"type": "image", "mimeType": "image/gif", "data": "R0lGODlhAQABAA=="}},
      {"role": "user", "content": {"type": "audio", "mimeType": "audio/wav", "data": "UklGRiQIAABXQVZFZm10IA=="}}
    ],
    "systemPrompt": "You are a terse harbour assistant.",
    "includeContext": "thisServer",
    "temperature": 0.2,
    "stopSequences": ["\n\n", "END"],
    "metadata": {"shift": "night"},
    "modelPreferences": {
      "hints": [{"name": "small"}, {"name": "fast"}],
      "costPriority": 0.7,
      "speedPriority": 0.6,
      "intelligencePriority": 0.3
    },
    "maxTokens": 120
  },
  "method": "sampling/createMessage",
  "id": "srv-sample-1",
  "jsonrpc": "2.0"
}`

// legacySamplingToolsRequest is sampling with tools: array contents,
// tool_use blocks from the assistant, and a user turn made of tool_result
// blocks only, one of them an error; it also asks to run as a task.
const legacySamplingToolsRequest = `{
  "jsonrpc": "2.0",
  "id": "srv-sample-2",
  "method": "sampling/createMessage",
  "params": {
    "maxTokens": 600,
    "messages": [
      {"role": "user", "content": {"type": "text", "text": "Which berth can take a 10 m draught at 22:00?"}},
      {
        "role": "assistant",
        "content": [
          {"type": "text", "text": "Checking the tide and the berths."},
          {"type": "tool_use", "id": "tu_81", "name": "tide_at", "input": {"time": "2026-03-02T22:00:00Z"}},
          {"type": "tool_use", "id": "tu_82", "name": "berth_depths", "input": {}}
        ]
      },
      {
        "role": "user",
        "content": [
          {
            "type": "tool_result",
            "toolUseId": "tu_81",
            "content": [{"type": "text", "text": "+1.7 m"}],
            "structuredContent": {"heightMetres": 1.7}
          },
          {
            "toolUseId": "tu_82",
            "type": "tool_result",
            "isError": true,
            "content": [{"type": "text", "text": "depth survey unavailable"}]
          }
        ],
        "_meta": {"example.quayside/turn": 3}
      }
    ],
    "tools": [
      {
        "name": "tide_at",
        "description": "Tide height at a time",
        "inputSchema": {"type": "object", "properties": {"time": {"type": "string", "format": "date-time"}}, "required": ["time"]}
      },
      {"name": "berth_depths", "inputSchema": {"type": "object"}}
    ],
    "toolChoice": {"mode": "auto"},
    "task": {"ttl": 45000}
  }
}`

const legacySamplingResult = `{
  "jsonrpc": "2.0",
  "id": "srv-sample-1",
  "result": {
    "model": "local-7b-instruct",
    "role": "assistant",
    "content": {"type": "text", "text": "Three vessels arrive tonight, the last at 23:40."},
    "stopReason": "endTurn"
  }
}`

const legacySamplingToolUseResult = `{
  "jsonrpc": "2.0",
  "id": "srv-sample-2",
  "result": {
    "role": "assistant",
    "stopReason": "toolUse",
    "model": "local-7b-instruct",
    "content": [
      {"type": "tool_use", "id": "tu_90", "name": "berth_status", "input": {"berth": "Q5"}},
      {"type": "tool_use", "id": "tu_91", "name": "berth_status", "input": {"berth": "Q6"}}
    ],
    "_meta": {"example.quayside/latencyMs": 812}
  }
}`

// legacyElicitFormRequest uses each primitive a form may ask for.
const legacyElicitFormRequest = `{
  "jsonrpc": "2.0",
  "id": "srv-elicit-1",
  "method": "elicitation/create",
  "params": {
    "mode": "form",
    "message": "Confirm the pilot booking for MV Kestrel.",
    "requestedSchema": {
      "type": "object",
      "properties": {
        "contact": {"type": "string", "format": "email", "title": "Agent e-mail", "minLength": 6},
        "arrival": {"type": "string", "format": "date-time", "description": "Expected at the pilot station"},
        "tugs": {"type": "integer", "minimum": 0, "maximum": 4, "default": 2},
        "hazardous": {"type": "boolean", "default": false},
        "side": {"type": "string", "enum": ["port", "starboard"]},
        "pilot": {
          "type": "string",
          "oneOf": [{"const": "p-17", "title": "A. Okafor"}, {"const": "p-23", "title": "M. Lindqvist"}],
          "default": "p-17"
        },
        "services": {
          "type": "array",
          "items": {"type": "string", "enum": ["water", "fuel", "waste"]},
          "minItems": 1,
          "maxItems": 3
        },
        "urgency": {"type": "string", "enum": ["routine", "urgent"], "enumNames": ["Routine", "Urgent"]}
      },
      "required": ["contact", "arrival"]
    }
  }
}`

const legacyElicitURLRequest = `{
  "jsonrpc": "2.0",
  "id": "srv-elicit-2",
  "method": "elicitation/create",
  "params": {
    "mode": "url",
    "elicitationId": "el-5b1d9e",
    "url": "https://portal.lighthouse.example/link-account?ticket=el-5b1d9e",
    "message": "Link your port-authority account to continue."
  }
}`

const legacyElicitAcceptResult = `{
  "jsonrpc": "2.0",
  "id": "srv-elicit-1",
  "result": {
    "action": "accept",
    "content": {
      "contact": "ops@kestrel-shipping.example",
      "arrival": "2026-03-02T21:30:00Z",
      "tugs": 3,
      "hazardous": false,
      "side": "port",
      "pilot": "p-23",
      "services": ["water", "waste"]
    }
  }
}`

const legacyElicitDeclineResult = `{"jsonrpc": "2.0", "id": "srv-elicit-2", "result": {"action": "decline"}}`

const legacyElicitCancelResult = `{"jsonrpc": "2.0", "id": "srv-elicit-3", "result": {"_meta": {"example.quayside/closedBy": "user"}, "action": "cancel"}}`

const legacyElicitationComplete = `{
  "jsonrpc": "2.0",
  "method": "notifications/elicitation/complete",
  "params": {"elicitationId": "el-5b1d9e"}
}`

// legacyURLElicitationRequired is the -32042 error: the request can only
// succeed once the user has visited the URL.
const legacyURLElicitationRequired = `{
  "jsonrpc": "2.0",
  "id": 31,
  "error": {
    "code": -32042,
    "message": "This request needs a linked account.",
    "data": {
      "elicitations": [
        {
          "mode": "url",
          "elicitationId": "el-9c04aa",
          "url": "https://portal.lighthouse.example/authorize?ref=el-9c04aa",
          "message": "Authorise Lighthouse to read your berth bookings."
        }
      ]
    }
  }
}`

// ---------------------------------------------------------------------
// 2025-11-25: tasks, an experimental core feature.

const legacyCreateTaskResult = `{
  "jsonrpc": "2.0",
  "id": 14,
  "result": {
    "task": {
      "taskId": "tsk-0c1f-4d2e",
      "status": "working",
      "statusMessage": "Survey queued behind two others",
      "createdAt": "2026-03-02T08:15:00Z",
      "lastUpdatedAt": "2026-03-02T08:15:04Z",
      "ttl": 90000,
      "pollInterval": 2500
    },
    "_meta": {"io.modelcontextprotocol/model-immediate-response": "The dredging survey has started; results follow in a few minutes."}
  }
}`

const legacyTasksGetRequest = `{"jsonrpc": "2.0", "id": 15, "method": "tasks/get", "params": {"taskId": "tsk-0c1f-4d2e"}}`

// legacyTasksGetFailed is a failed task kept forever: ttl null.
const legacyTasksGetFailed = `{
  "jsonrpc": "2.0",
  "id": 16,
  "result": {
    "taskId": "tsk-77aa",
    "status": "failed",
    "statusMessage": "Sonar unit offline",
    "createdAt": "2026-03-01T19:00:00Z",
    "lastUpdatedAt": "2026-03-01T19:02:30Z",
    "ttl": null
  }
}`

const legacyTasksListRequest = `{"jsonrpc": "2.0", "id": 17, "method": "tasks/list", "params": {"cursor": "dGFza3MtMQ=="}}`

const legacyTasksListResult = `{
  "jsonrpc": "2.0",
  "id": 17,
  "result": {
    "tasks": [
      {
        "taskId": "tsk-0c1f-4d2e",
        "status": "input_required",
        "createdAt": "2026-03-02T08:15:00Z",
        "lastUpdatedAt": "2026-03-02T08:16:10Z",
        "ttl": 90000,
        "pollInterval": 2500
      },
      {
        "taskId": "tsk-1d20",
        "status": "completed",
        "createdAt": "2026-03-02T07:00:00Z",
        "lastUpdatedAt": "2026-03-02T07:03:00Z",
        "ttl": 600000
      }
    ],
    "nextCursor": "dGFza3MtMg=="
  }
}`

const legacyTasksResultRequest = `{"jsonrpc": "2.0", "id": 18, "method": "tasks/result", "params": {"taskId": "tsk-1d20"}}`

// legacyTasksResultResponse is what the task's tools/call would have
// returned, tied to its task.
const legacyTasksResultResponse = `{
  "jsonrpc": "2.0",
  "id": 18,
  "result": {
    "content": [{"type": "text", "text": "Plan: dredge the east channel to 12.5 m over 4 nights."}],
    "structuredContent": {"nights": 4, "targetDepthMetres": 12.5},
    "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "tsk-1d20"}}
  }
}`

const legacyTaskStatusNotification = `{
  "jsonrpc": "2.0",
  "method": "notifications/tasks/status",
  "params": {
    "taskId": "tsk-1d20",
    "status": "completed",
    "createdAt": "2026-03-02T07:00:00Z",
    "lastUpdatedAt": "2026-03-02T07:03:00Z",
    "ttl": 600000
  }
}`

const legacyTasksCancelRequest = `{"jsonrpc": "2.0", "id": 19, "method": "tasks/cancel", "params": {"taskId": "tsk-0c1f-4d2e"}}`

const legacyTasksCancelResult = `{
  "jsonrpc": "2.0",
  "id": 19,
  "result": {
    "taskId": "tsk-0c1f-4d2e",
    "status": "cancelled",
    "statusMessage": "Cancelled by the client",
    "createdAt": "2026-03-02T08:15:00Z",
    "lastUpdatedAt": "2026-03-02T08:17:45Z",
    "ttl": 90000
  }
}`

// legacyClientTasksCapabilities is a client that can receive tasks.
const legacyClientTasksCapabilities = `{
  "tasks": {
    "list": {},
    "cancel": {},
    "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}
  },
  "sampling": {}
}`

// legacyServerTasksCapabilities is a server that runs tools/call as tasks.
const legacyServerTasksCapabilities = `{
  "tools": {},
  "tasks": {"requests": {"tools": {"call": {}}}, "cancel": {}, "list": {}}
}`

// ---------------------------------------------------------------------
// 2026-07-28: stateless, with _meta on every request and resultType on
// every result.

const modernDiscoverRequest = `{
  "jsonrpc": "2.0",
  "id": 1,
  "method": "server/discover",
  "params": {
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": {"name": "quayside", "version": "3.4.1"}
    }
  }
}`

const modernDiscoverResult = `{
  "jsonrpc": "2.0",
  "id": 1,
  "result": {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28", "2025-11-25"],
    "capabilities": {
      "tools": {"listChanged": true},
      "resources": {"subscribe": true, "listChanged": true},
      "prompts": {},
      "completions": {},
      "logging": {},
      "extensions": {"io.modelcontextprotocol/tasks": {}, "example.lighthouse/charts": {"formats": ["s57"]}}
    },
    "instructions": "Berth numbers are strings such as \"Q3\".",
    "ttlMs": 600000,
    "cacheScope": "public",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "lighthouse", "version": "2.0.0", "title": "Lighthouse Port Data"}}
  }
}`

const modernUnsupportedVersion = `{
  "jsonrpc": "2.0",
  "id": 1,
  "error": {
    "code": -32022,
    "message": "Unsupported protocol version",
    "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "2027-03-01"}
  }
}`

const modernToolsListRequest = `{
  "jsonrpc": "2.0",
  "id": 2,
  "method": "tools/list",
  "params": {
    "cursor": "",
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
  }
}`

// modernToolsListResult has an output schema that is not an object (2026
// allows any schema) and the caching members.
const modernToolsListResult = `{
  "jsonrpc": "2.0",
  "id": 2,
  "result": {
    "resultType": "complete",
    "tools": [
      {
        "name": "free_berths",
        "title": "Free berths",
        "description": "Lists the berths free in a time window",
        "inputSchema": {
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "type": "object",
          "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
          "$defs": {"hhmm": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"}}
        },
        "outputSchema": {"type": "array", "items": {"type": "string"}},
        "annotations": {"readOnlyHint": true, "openWorldHint": false},
        "icons": [{"src": "https://lighthouse.example/free.png", "mimeType": "image/png", "sizes": ["16x16", "32x32"]}]
      },
      {
        "name": "reserve_berth",
        "inputSchema": {"type": "object", "properties": {"berth": {"type": "string"}}, "required": ["berth"]},
        "annotations": {"destructiveHint": false, "idempotentHint": false}
      }
    ],
    "nextCursor": "",
    "ttlMs": 300000,
    "cacheScope": "private",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "lighthouse", "version": "2.0.0"}}
  }
}`

// modernToolsCallRequest is a first attempt: no log level, no progress
// token, a key owned by someone else next to the reserved ones.
const modernToolsCallRequest = `{
  "jsonrpc": "2.0",
  "id": "c-101",
  "method": "tools/call",
  "params": {
    "_meta": {
      "traceparent": "00-5e1c0a9d2b7f4c3a8e6d1f0b9a2c4e7d-3f2a1b0c9d8e7f6a-01",
      "io.modelcontextprotocol/clientInfo": {"name": "quayside", "version": "3.4.1"},
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
    },
    "arguments": {"berth": "Q3", "window": {"from": "20:00", "to": "23:59"}},
    "name": "reserve_berth"
  }
}`

const modernToolsCallWithProgressRequest = `{
  "jsonrpc": "2.0",
  "id": 102,
  "method": "tools/call",
  "params": {
    "name": "free_berths",
    "arguments": {"from": "20:00", "to": "23:59"},
    "_meta": {
      "progressToken": "tally-5",
      "io.modelcontextprotocol/logLevel": "notice",
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": {"name": "quayside", "version": "3.4.1"}
    }
  }
}`

// modernToolsCallResult is complete, with structured content that is an
// array (2026 allows any JSON value there).
const modernToolsCallResult = `{
  "jsonrpc": "2.0",
  "id": 102,
  "result": {
    "content": [{"type": "text", "text": "[\"Q1\",\"Q4\"]"}],
    "structuredContent": ["Q1", "Q4"],
    "resultType": "complete",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "lighthouse", "version": "2.0.0"}}
  }
}`

// modernToolsCallInputRequired answers modernToolsCallRequest: the server
// needs an elicitation, a sampled message and the client's roots first.
const modernToolsCallInputRequired = `{
  "jsonrpc": "2.0",
  "id": "c-101",
  "result": {
    "resultType": "input_required",
    "requestState": "rs1.eyJiZXJ0aCI6IlEzIn0.k9",
    "inputRequests": {
      "who": {
        "method": "elicitation/create",
        "params": {
          "mode": "form",
          "message": "Who is the agent for this booking?",
          "requestedSchema": {"type": "object", "properties": {"agent": {"type": "string", "title": "Agent name"}}, "required": ["agent"]}
        }
      },
      "draft": {
        "method": "sampling/createMessage",
        "params": {
          "messages": [{"role": "user", "content": {"type": "text", "text": "Draft a one-line berth notice for Q3."}}],
          "maxTokens": 80
        }
      },
      "where": {"method": "roots/list"}
    }
  }
}`

// modernInputResponses answers every entry of modernToolsCallInputRequired,
// keyed as they were.
const modernInputResponses = `{
  "who": {"action": "accept", "content": {"agent": "Kestrel Shipping Ltd"}},
  "draft": {
    "role": "assistant",
    "model": "local-7b-instruct",
    "content": {"type": "text", "text": "Berth Q3 reserved 20:00 to 23:59 for MV Kestrel."},
    "stopReason": "endTurn"
  },
  "where": {"roots": [{"uri": "file:///srv/harbour/bookings", "name": "Bookings"}]}
}`

// modernToolsCallRetry is modernToolsCallRequest again, under a new id,
// with the answers and the request state.
const modernToolsCallRetry = `{
  "jsonrpc": "2.0",
  "id": "c-101-r1",
  "method": "tools/call",
  "params": {
    "name": "reserve_berth",
    "arguments": {"berth": "Q3", "window": {"from": "20:00", "to": "23:59"}},
    "inputResponses": {
      "who": {"action": "accept", "content": {"agent": "Kestrel Shipping Ltd"}},
      "draft": {
        "role": "assistant",
        "model": "local-7b-instruct",
        "content": {"type": "text", "text": "Berth Q3 reserved 20:00 to 23:59 for MV Kestrel."},
        "stopReason": "endTurn"
      },
      "where": {"roots": [{"uri": "file:///srv/harbour/bookings", "name": "Bookings"}]}
    },
    "requestState": "rs1.eyJiZXJ0aCI6IlEzIn0.k9",
    "_meta": {
      "traceparent": "00-5e1c0a9d2b7f4c3a8e6d1f0b9a2c4e7d-3f2a1b0c9d8e7f6a-01",
      "io.modelcontextprotocol/clientInfo": {"name": "quayside", "version": "3.4.1"},
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
    }
  }
}`

// modernInputRequiredStateOnly asks for nothing but a retry with the state.
const modernInputRequiredStateOnly = `{"jsonrpc": "2.0", "id": "c-110", "result": {"requestState": "rs1.cG9sbC0y.a1", "resultType": "input_required"}}`

const modernResourcesReadRetry = `{
  "jsonrpc": "2.0",
  "id": "c-111",
  "method": "resources/read",
  "params": {
    "uri": "harbour://berths/Q3/log",
    "requestState": "rs1.cG9sbC0y.a1",
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}
    }
  }
}`

const modernResourcesReadResult = `{
  "jsonrpc": "2.0",
  "id": "c-111",
  "result": {
    "resultType": "complete",
    "contents": [{"uri": "harbour://berths/Q3/log", "mimeType": "text/csv", "text": "time,vessel,event\n"}],
    "ttlMs": 0,
    "cacheScope": "private"
  }
}`

const modernResourceNotFound = `{
  "jsonrpc": "2.0",
  "id": "c-112",
  "error": {"code": -32602, "message": "Resource not found", "data": {"uri": "harbour://berths/Q9/log"}}
}`

const modernResourcesListResult = `{
  "jsonrpc": "2.0",
  "id": 12,
  "result": {
    "resources": [{"uri": "harbour://tides/2026-03", "name": "tide-table", "mimeType": "text/csv", "size": 9120}],
    "resultType": "complete",
    "ttlMs": 3600000,
    "cacheScope": "public"
  }
}`

const modernResourceTemplatesListResult = `{
  "jsonrpc": "2.0",
  "id": 13,
  "result": {
    "resourceTemplates": [{"name": "vessel", "uriTemplate": "harbour://vessels/{imo}", "mimeType": "application/json"}],
    "nextCursor": "dHBsLTI=",
    "resultType": "complete",
    "cacheScope": "public",
    "ttlMs": 86400000
  }
}`

const modernPromptsListResult = `{
  "jsonrpc": "2.0",
  "id": 14,
  "result": {
    "resultType": "complete",
    "prompts": [{"name": "departure_check", "description": "Pre-departure checklist", "arguments": [{"name": "vessel", "required": true}]}],
    "ttlMs": 60000
  }
}`

const modernPromptsGetRequest = `{
  "jsonrpc": "2.0",
  "id": 15,
  "method": "prompts/get",
  "params": {
    "name": "departure_check",
    "arguments": {"vessel": "MV Kestrel"},
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    }
  }
}`

const modernPromptsGetResult = `{
  "jsonrpc": "2.0",
  "id": 15,
  "result": {
    "resultType": "complete",
    "messages": [
      {"role": "user", "content": {"type": "text", "text": "Run the departure checklist for MV Kestrel."}},
      {"role": "user", "content": {"type": "resource_link", "uri": "harbour://vessels/kestrel", "name": "kestrel"}}
    ]
  }
}`

const modernCompleteRequest = `{
  "jsonrpc": "2.0",
  "id": 16,
  "method": "completion/complete",
  "params": {
    "argument": {"value": "Q", "name": "berth"},
    "ref": {"uri": "harbour://berths/{berth}/log", "type": "ref/resource"},
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}
    }
  }
}`

const modernCompleteResult = `{
  "jsonrpc": "2.0",
  "id": 16,
  "result": {"resultType": "complete", "completion": {"values": ["Q1", "Q2", "Q3"]}}
}`

const modernLogMessage = `{
  "jsonrpc": "2.0",
  "method": "notifications/message",
  "params": {"level": "warning", "data": "tide gauge 4 reports stale readings"}
}`

const modernProgressNotification = `{
  "jsonrpc": "2.0",
  "method": "notifications/progress",
  "params": {"progressToken": 4417, "progress": 0.5}
}`

const modernCancelledNotification = `{
  "jsonrpc": "2.0",
  "method": "notifications/cancelled",
  "params": {"requestId": "c-101-r1"}
}`

const modernMissingElicitation = `{
  "jsonrpc": "2.0",
  "id": "c-120",
  "error": {
    "code": -32021,
    "message": "Missing required client capability",
    "data": {"requiredCapabilities": {"elicitation": {"form": {}}}}
  }
}`

// modernHeaderMismatch carries no data.
const modernHeaderMismatch = `{
  "jsonrpc": "2.0",
  "id": "c-121",
  "error": {"code": -32020, "message": "Mcp-Name header does not match params.name"}
}`

// modernElicitFormParams and modernElicitURLParams are 2026 elicitations as
// they appear inside inputRequests: no elicitationId.
const modernElicitFormParams = `{
  "message": "How many tugs should stand by?",
  "requestedSchema": {"type": "object", "properties": {"tugs": {"type": "integer", "minimum": 1}}, "required": ["tugs"]},
  "mode": "form"
}`

const modernElicitURLParams = `{
  "mode": "url",
  "message": "Enter the vessel's customs code on the authority's site.",
  "url": "https://customs.lighthouse.example/declare?vessel=kestrel"
}`

// modernElicitURLAccept is the answer to a URL elicitation: consent, no
// content.
const modernElicitURLAccept = `{"action": "accept"}`

const modernListenRequest = `{
  "jsonrpc": "2.0",
  "id": "watch-7",
  "method": "subscriptions/listen",
  "params": {
    "notifications": {
      "toolsListChanged": true,
      "promptsListChanged": true,
      "resourceSubscriptions": ["harbour://tides/2026-03", "harbour://berths/Q3/log"]
    },
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}
    }
  }
}`

const modernSubscriptionsAck = `{
  "jsonrpc": "2.0",
  "method": "notifications/subscriptions/acknowledged",
  "params": {
    "_meta": {"io.modelcontextprotocol/subscriptionId": "watch-7"},
    "notifications": {
      "resourceSubscriptions": ["harbour://tides/2026-03", "harbour://berths/Q3/log"],
      "promptsListChanged": true,
      "toolsListChanged": true
    }
  }
}`

const modernToolsListChanged = `{
  "jsonrpc": "2.0",
  "method": "notifications/tools/list_changed",
  "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "watch-7"}}
}`

const modernResourceUpdated = `{
  "jsonrpc": "2.0",
  "method": "notifications/resources/updated",
  "params": {"uri": "harbour://berths/Q3/log", "_meta": {"io.modelcontextprotocol/subscriptionId": "watch-7"}}
}`

// modernListenClosed ends the listen stream gracefully.
const modernListenClosed = `{
  "jsonrpc": "2.0",
  "id": "watch-7",
  "result": {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": "watch-7"}}
}`

// ---------------------------------------------------------------------
// 2026-07-28: the tasks extension (io.modelcontextprotocol/tasks).

const extTaskID = "ext-4e2b-91c7"

const extCreateTaskResponse = `{
  "jsonrpc": "2.0",
  "id": 40,
  "result": {
    "resultType": "task",
    "taskId": "ext-4e2b-91c7",
    "status": "working",
    "statusMessage": "Queued",
    "createdAt": "2026-08-03T06:00:00Z",
    "lastUpdatedAt": "2026-08-03T06:00:00Z",
    "ttlMs": 1800000,
    "pollIntervalMs": 4000
  }
}`

const extTasksGetRequest = `{
  "jsonrpc": "2.0",
  "id": 41,
  "method": "tasks/get",
  "params": {
    "taskId": "ext-4e2b-91c7",
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
    }
  }
}`

const extGetTaskInputRequired = `{
  "id": 41,
  "jsonrpc": "2.0",
  "result": {
    "status": "input_required",
    "resultType": "complete",
    "taskId": "ext-4e2b-91c7",
    "createdAt": "2026-08-03T06:00:00Z",
    "lastUpdatedAt": "2026-08-03T06:02:10Z",
    "ttlMs": 1800000,
    "pollIntervalMs": 4000,
    "inputRequests": {
      "confirm": {
        "method": "elicitation/create",
        "params": {
          "mode": "form",
          "message": "Approve overtime for the night crew?",
          "requestedSchema": {
            "type": "object",
            "properties": {"approved": {"type": "boolean"}, "hours": {"type": "integer", "maximum": 6}},
            "required": ["approved"]
          }
        }
      }
    }
  }
}`

const extTaskUpdateRequest = `{
  "jsonrpc": "2.0",
  "id": 42,
  "method": "tasks/update",
  "params": {
    "inputResponses": {"confirm": {"action": "accept", "content": {"approved": true, "hours": 4}}},
    "taskId": "ext-4e2b-91c7",
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
  }
}`

const extUpdateAck = `{"jsonrpc": "2.0", "id": 42, "result": {"resultType": "complete"}}`

const extGetTaskCompleted = `{
  "jsonrpc": "2.0",
  "id": 43,
  "result": {
    "resultType": "complete",
    "taskId": "ext-4e2b-91c7",
    "status": "completed",
    "createdAt": "2026-08-03T06:00:00Z",
    "lastUpdatedAt": "2026-08-03T06:09:30Z",
    "ttlMs": 1800000,
    "pollIntervalMs": 4000,
    "result": {
      "content": [{"type": "text", "text": "Overtime approved: 4 hours."}],
      "isError": false
    }
  }
}`

const extGetTaskFailed = `{
  "jsonrpc": "2.0",
  "id": 44,
  "result": {
    "resultType": "complete",
    "taskId": "ext-77d0-0a13",
    "status": "failed",
    "statusMessage": "Crew roster service unreachable",
    "createdAt": "2026-08-03T05:00:00Z",
    "lastUpdatedAt": "2026-08-03T05:00:45Z",
    "ttlMs": null,
    "error": {"code": -32603, "message": "roster backend timed out", "data": {"afterMs": 30000}}
  }
}`

const extTasksNotification = `{
  "jsonrpc": "2.0",
  "method": "notifications/tasks",
  "params": {
    "taskId": "ext-4e2b-91c7",
    "status": "completed",
    "createdAt": "2026-08-03T06:00:00Z",
    "lastUpdatedAt": "2026-08-03T06:09:30Z",
    "ttlMs": 1800000,
    "result": {"content": [{"type": "text", "text": "Overtime approved: 4 hours."}]},
    "_meta": {"io.modelcontextprotocol/subscriptionId": "watch-tasks"}
  }
}`

const extListenForTasks = `{
  "jsonrpc": "2.0",
  "id": "watch-tasks",
  "method": "subscriptions/listen",
  "params": {
    "notifications": {"taskIds": ["ext-4e2b-91c7"]},
    "_meta": {
      "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
      "io.modelcontextprotocol/protocolVersion": "2026-07-28"
    }
  }
}`

const extMissingCapability = `{
  "jsonrpc": "2.0",
  "id": "watch-tasks",
  "error": {
    "code": -32021,
    "message": "Declare the tasks extension to listen for tasks",
    "data": {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
  }
}`

const extTasksCancelRequest = `{
  "jsonrpc": "2.0",
  "id": 45,
  "method": "tasks/cancel",
  "params": {
    "taskId": "ext-4e2b-91c7",
    "_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
  }
}`

const extCancelAck = `{"jsonrpc":"2.0","id":45,"result":{"resultType":"complete"}}`

// ---------------------------------------------------------------------
// The table, the codecs and the tests.

// metaOnly is the payload of messages that carry nothing but _meta (and,
// in 2026-07-28, resultType): the params of server/discover, the empty
// results of ping, tasks/update and tasks/cancel, a list_changed
// notification on a listen stream. The package has no named type for
// them, since there is nothing else to read.
type metaOnly struct {
	ResultType string `json:"resultType,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// answersToReserveBerth is modernInputResponses with each answer in its
// own type, as a client builds it.
type answersToReserveBerth struct {
	Who   ElicitResult        `json:"who"`
	Draft CreateMessageResult `json:"draft"`
	Where ListRootsResult     `json:"where"`
}

// codec decodes one wire example into its Go type and encodes it again.
type codec func(wire []byte) ([]byte, error)

// message is the codec of a JSON-RPC message whose payload is a T: the
// params of a request or notification, the result of a response, the data
// of an error. The message is rebuilt with NewRequest, NewNotification or
// NewResponse and encoded with AppendJSON, as the session sends it.
func message[T any]() codec {
	return func(wire []byte) ([]byte, error) {
		m, err := DecodeMessage(wire)
		if err != nil {
			return nil, err
		}
		payload := messagePayload(m)
		if len(payload) == 0 {
			return nil, errors.New("message has no payload to decode")
		}
		var v T
		if err := json.Unmarshal(payload, &v); err != nil {
			return nil, fmt.Errorf("decode %T: %w", v, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode %T: %w", v, err)
		}
		var out *Message
		switch {
		case m.IsRequest():
			out, err = NewRequest(m.ID, m.Method, json.RawMessage(b))
		case m.IsNotification():
			out, err = NewNotification(m.Method, json.RawMessage(b))
		case m.Error != nil:
			out, err = NewResponse(m.ID, nil, NewError(m.Error.Code, m.Error.Message, json.RawMessage(b)))
		default:
			out, err = NewResponse(m.ID, json.RawMessage(b), nil)
		}
		if err != nil {
			return nil, err
		}
		return out.AppendJSON(nil), nil
	}
}

// envelope is the codec of a message without a payload (ping, a
// notification without params, an error without data).
func envelope() codec {
	return func(wire []byte) ([]byte, error) {
		m, err := DecodeMessage(wire)
		if err != nil {
			return nil, err
		}
		if p := messagePayload(m); len(p) > 0 && string(p) != "{}" {
			return nil, fmt.Errorf("message has a payload, %s; give it a type", p)
		}
		return m.AppendJSON(nil), nil
	}
}

// bare is the codec of a JSON value that is a T on its own, such as the
// params of an elicitation inside inputRequests.
func bare[T any]() codec {
	return func(wire []byte) ([]byte, error) {
		var v T
		if err := json.Unmarshal(wire, &v); err != nil {
			return nil, fmt.Errorf("decode %T: %w", v, err)
		}
		return json.Marshal(v)
	}
}

func messagePayload(m *Message) json.RawMessage {
	switch {
	case m.Method != "":
		return m.Params
	case m.Error != nil:
		return m.Error.Data
	}
	return m.Result
}

const (
	eraLegacy = Version20251125
	eraModern = Version20260728
)

type wireExample struct {
	era   string
	name  string
	wire  string
	codec codec
}

var wireExamples = []wireExample{
	{eraLegacy, "initialize request", legacyInitializeRequest, message[InitializeParams]()},
	{eraLegacy, "initialize result", legacyInitializeResult, message[InitializeResult]()},
	{eraLegacy, "initialized notification", legacyInitializedNotification, envelope()},
	{eraLegacy, "initialize refused, -32602 with versions", legacyInitializeUnsupportedVersion, message[UnsupportedVersionData]()},
	{eraLegacy, "ping request", legacyPingRequest, envelope()},
	{eraLegacy, "ping result", legacyPingResult, message[metaOnly]()},
	{eraLegacy, "tools/list request", legacyToolsListRequest, message[ListToolsParams]()},
	{eraLegacy, "tools/list result", legacyToolsListResult, message[ListToolsResult]()},
	{eraLegacy, "tools/call as a task", legacyToolsCallTaskRequest, message[CallToolParams]()},
	{eraLegacy, "tools/call result, every block", legacyToolsCallResult, message[CallToolResult]()},
	{eraLegacy, "tools/call result, isError", legacyToolsCallError, message[CallToolResult]()},
	{eraLegacy, "resources/list result", legacyResourcesListResult, message[ListResourcesResult]()},
	{eraLegacy, "resources/templates/list result", legacyResourceTemplatesListResult, message[ListResourceTemplatesResult]()},
	{eraLegacy, "resources/read request", legacyResourcesReadRequest, message[ReadResourceParams]()},
	{eraLegacy, "resources/read result", legacyResourcesReadResult, message[ReadResourceResult]()},
	{eraLegacy, "resources/subscribe request", legacyResourcesSubscribeRequest, message[SubscribeParams]()},
	{eraLegacy, "resources/updated notification", legacyResourceUpdatedNotification, message[ResourceUpdatedParams]()},
	{eraLegacy, "resource not found, -32002", legacyResourceNotFound, message[ResourceNotFoundData]()},
	{eraLegacy, "prompts/list result", legacyPromptsListResult, message[ListPromptsResult]()},
	{eraLegacy, "prompts/get request", legacyPromptsGetRequest, message[GetPromptParams]()},
	{eraLegacy, "prompts/get result", legacyPromptsGetResult, message[GetPromptResult]()},
	{eraLegacy, "completion/complete request", legacyCompleteRequest, message[CompleteParams]()},
	{eraLegacy, "completion/complete result", legacyCompleteResult, message[CompleteResult]()},
	{eraLegacy, "logging/setLevel request", legacySetLevelRequest, message[SetLevelParams]()},
	{eraLegacy, "log message", legacyLogMessage, message[LoggingMessageParams]()},
	{eraLegacy, "progress", legacyProgressNotification, message[ProgressParams]()},
	{eraLegacy, "cancelled", legacyCancelledNotification, message[CancelledParams]()},
	{eraLegacy, "roots/list request", legacyRootsListRequest, envelope()},
	{eraLegacy, "roots/list result", legacyRootsListResult, message[ListRootsResult]()},
	{eraLegacy, "roots list_changed", legacyRootsListChanged, envelope()},
	{eraLegacy, "sampling request, single blocks", legacySamplingRequest, message[CreateMessageParams]()},
	{eraLegacy, "sampling request with tools", legacySamplingToolsRequest, message[CreateMessageParams]()},
	{eraLegacy, "sampling result, one block", legacySamplingResult, message[CreateMessageResult]()},
	{eraLegacy, "sampling result, tool_use array", legacySamplingToolUseResult, message[CreateMessageResult]()},
	{eraLegacy, "elicitation, form", legacyElicitFormRequest, message[ElicitParams]()},
	{eraLegacy, "elicitation, url", legacyElicitURLRequest, message[ElicitParams]()},
	{eraLegacy, "elicitation result, accept", legacyElicitAcceptResult, message[ElicitResult]()},
	{eraLegacy, "elicitation result, decline", legacyElicitDeclineResult, message[ElicitResult]()},
	{eraLegacy, "elicitation result, cancel", legacyElicitCancelResult, message[ElicitResult]()},
	{eraLegacy, "elicitation complete", legacyElicitationComplete, message[ElicitationCompleteParams]()},
	{eraLegacy, "url elicitation required, -32042", legacyURLElicitationRequired, message[URLElicitationRequiredData]()},
	{eraLegacy, "task created", legacyCreateTaskResult, message[CreateTaskResult]()},
	{eraLegacy, "tasks/get request", legacyTasksGetRequest, message[GetTaskParams]()},
	{eraLegacy, "tasks/get result, failed, ttl null", legacyTasksGetFailed, message[GetTaskResult]()},
	{eraLegacy, "tasks/list request", legacyTasksListRequest, message[ListTasksParams]()},
	{eraLegacy, "tasks/list result", legacyTasksListResult, message[ListTasksResult]()},
	{eraLegacy, "tasks/result request", legacyTasksResultRequest, message[GetTaskPayloadParams]()},
	{eraLegacy, "tasks/result result", legacyTasksResultResponse, message[CallToolResult]()},
	{eraLegacy, "tasks/status notification", legacyTaskStatusNotification, message[TaskStatusParams]()},
	{eraLegacy, "tasks/cancel request", legacyTasksCancelRequest, message[CancelTaskParams]()},
	{eraLegacy, "tasks/cancel result", legacyTasksCancelResult, message[CancelTaskResult]()},
	{eraLegacy, "client tasks capability", legacyClientTasksCapabilities, bare[ClientCapabilities]()},
	{eraLegacy, "server tasks capability", legacyServerTasksCapabilities, bare[ServerCapabilities]()},

	{eraModern, "server/discover request", modernDiscoverRequest, message[metaOnly]()},
	{eraModern, "server/discover result", modernDiscoverResult, message[DiscoverResult]()},
	{eraModern, "unsupported version, -32022", modernUnsupportedVersion, message[UnsupportedVersionData]()},
	{eraModern, "tools/list request", modernToolsListRequest, message[ListToolsParams]()},
	{eraModern, "tools/list result", modernToolsListResult, message[ListToolsResult]()},
	{eraModern, "tools/call request", modernToolsCallRequest, message[CallToolParams]()},
	{eraModern, "tools/call request with progress and log level", modernToolsCallWithProgressRequest, message[CallToolParams]()},
	{eraModern, "tools/call result, complete", modernToolsCallResult, message[CallToolResult]()},
	{eraModern, "tools/call result, input_required", modernToolsCallInputRequired, message[InputRequiredResult]()},
	{eraModern, "input responses", modernInputResponses, bare[answersToReserveBerth]()},
	{eraModern, "tools/call retry", modernToolsCallRetry, message[CallToolParams]()},
	{eraModern, "input_required, state only", modernInputRequiredStateOnly, message[InputRequiredResult]()},
	{eraModern, "resources/read retry", modernResourcesReadRetry, message[ReadResourceParams]()},
	{eraModern, "resources/read result", modernResourcesReadResult, message[ReadResourceResult]()},
	{eraModern, "resource not found, -32602", modernResourceNotFound, message[ResourceNotFoundData]()},
	{eraModern, "resources/list result", modernResourcesListResult, message[ListResourcesResult]()},
	{eraModern, "resources/templates/list result", modernResourceTemplatesListResult, message[ListResourceTemplatesResult]()},
	{eraModern, "prompts/list result", modernPromptsListResult, message[ListPromptsResult]()},
	{eraModern, "prompts/get request", modernPromptsGetRequest, message[GetPromptParams]()},
	{eraModern, "prompts/get result", modernPromptsGetResult, message[GetPromptResult]()},
	{eraModern, "completion/complete request", modernCompleteRequest, message[CompleteParams]()},
	{eraModern, "completion/complete result", modernCompleteResult, message[CompleteResult]()},
	{eraModern, "log message", modernLogMessage, message[LoggingMessageParams]()},
	{eraModern, "progress", modernProgressNotification, message[ProgressParams]()},
	{eraModern, "cancelled", modernCancelledNotification, message[CancelledParams]()},
	{eraModern, "missing capability, -32021", modernMissingElicitation, message[MissingCapabilityData]()},
	{eraModern, "header mismatch, -32020", modernHeaderMismatch, envelope()},
	{eraModern, "elicitation params, form", modernElicitFormParams, bare[ElicitParams]()},
	{eraModern, "elicitation params, url", modernElicitURLParams, bare[ElicitParams]()},
	{eraModern, "elicitation result, url accept", modernElicitURLAccept, bare[ElicitResult]()},
	{eraModern, "subscriptions/listen request", modernListenRequest, message[SubscriptionsListenParams]()},
	{eraModern, "subscriptions acknowledged", modernSubscriptionsAck, message[SubscriptionsAcknowledgedParams]()},
	{eraModern, "tools list_changed on a listen stream", modernToolsListChanged, message[metaOnly]()},
	{eraModern, "resources/updated on a listen stream", modernResourceUpdated, message[ResourceUpdatedParams]()},
	{eraModern, "subscriptions/listen result", modernListenClosed, message[SubscriptionsListenResult]()},

	{eraModern, "tasks extension: task created", extCreateTaskResponse, message[ExtCreateTaskResult]()},
	{eraModern, "tasks extension: tasks/get request", extTasksGetRequest, message[GetTaskParams]()},
	{eraModern, "tasks extension: input_required", extGetTaskInputRequired, message[ExtGetTaskResult]()},
	{eraModern, "tasks extension: tasks/update", extTaskUpdateRequest, message[UpdateTaskParams]()},
	{eraModern, "tasks extension: update ack", extUpdateAck, message[metaOnly]()},
	{eraModern, "tasks extension: completed", extGetTaskCompleted, message[ExtGetTaskResult]()},
	{eraModern, "tasks extension: failed", extGetTaskFailed, message[ExtGetTaskResult]()},
	{eraModern, "tasks extension: notification", extTasksNotification, message[ExtGetTaskResult]()},
	{eraModern, "tasks extension: listen for task ids", extListenForTasks, message[SubscriptionsListenParams]()},
	{eraModern, "tasks extension: missing capability", extMissingCapability, message[MissingCapabilityData]()},
	{eraModern, "tasks extension: tasks/cancel", extTasksCancelRequest, message[CancelTaskParams]()},
	{eraModern, "tasks extension: cancel ack", extCancelAck, message[metaOnly]()},
}

// TestWireExamplesRoundTrip decodes every example into its Go type,
// encodes it again and requires the same JSON value back: no member lost,
// renamed or added, whatever the order and white space it came with.
func TestWireExamplesRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, ex := range wireExamples {
		t.Run(ex.era+"/"+ex.name, func(t *testing.T) {
			if seen[ex.era+ex.name] {
				t.Fatal("two examples with this name")
			}
			seen[ex.era+ex.name] = true
			checkRoundTrip(t, ex.wire, ex.codec)
		})
	}
}

// checkRoundTrip runs wire through c and requires the same JSON value on a
// single line.
func checkRoundTrip(t *testing.T, wire string, c codec) {
	t.Helper()
	out, err := c([]byte(wire))
	if err != nil {
		t.Fatalf("%v\n%s", err, wire)
	}
	if !json.Valid(out) || bytes.ContainsAny(out, "\r\n") {
		t.Fatalf("re-encoded to invalid or multi-line JSON: %q", out)
	}
	if !jsonEqual(t, out, []byte(wire)) {
		t.Errorf("round trip changed it:\n got %s\nwant %s", out, compactString(t, wire))
	}
}

// unknownMember is the member TestWireExamplesTolerateUnknownMembers adds
// to every object, with a value of every JSON kind inside.
const unknownMember = "x-tako-future-member"

var unknownValue = map[string]any{"list": []any{1.5, "two", nil, true, map[string]any{"deep": []any{}}}}

// typedMaps are members whose object is a map from keys to values of one
// type (a prompt's string arguments, the inputRequests of a result): a key
// added there is a new entry of the map, not an unknown member, so none is
// added there.
var typedMaps = map[string]bool{"arguments": true, "inputRequests": true}

// TestWireExamplesTolerateUnknownMembers adds an unknown member to every
// object of every example, the envelope included, and requires that it
// still decodes and that everything else comes back unchanged: a peer on a
// newer revision must not break an older client.
func TestWireExamplesTolerateUnknownMembers(t *testing.T) {
	for _, ex := range wireExamples {
		t.Run(ex.era+"/"+ex.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(ex.wire))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			n := addUnknownMembers(v, "")
			if n == 0 {
				t.Fatal("no object to add a member to")
			}
			widened, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			out, err := ex.codec(widened)
			if err != nil {
				t.Fatalf("%d unknown members broke decoding: %v\n%s", n, err, widened)
			}
			var got, want any
			mustUnmarshal(t, out, &got)
			mustUnmarshal(t, []byte(ex.wire), &want)
			if got = withoutMember(got, unknownMember); !reflect.DeepEqual(got, want) {
				t.Errorf("unknown members changed the rest:\n got %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
			}
		})
	}
}

// addUnknownMembers adds unknownMember to every object in v, except the
// typed maps, and returns how many it added.
func addUnknownMembers(v any, key string) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			n += addUnknownMembers(child, k)
		}
		if !typedMaps[key] {
			v[unknownMember] = unknownValue
			n++
		}
	case []any:
		for _, child := range v {
			n += addUnknownMembers(child, "")
		}
	}
	return n
}

// withoutMember returns v with member removed from every object: where a
// type keeps raw JSON (schemas, _meta, arguments), the unknown member
// rightly passes through.
func withoutMember(v any, member string) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, member)
		for k, child := range v {
			v[k] = withoutMember(child, member)
		}
	case []any:
		for i, child := range v {
			v[i] = withoutMember(child, member)
		}
	}
	return v
}

// removedIn2026 are the methods 2026-07-28 no longer has.
var removedIn2026 = []string{
	MethodInitialize, MethodPing, MethodLoggingSetLevel, MethodResourcesSubscribe, MethodResourcesUnsubscribe,
	MethodTasksList, MethodTasksResult, NotificationInitialized, NotificationRootsListChanged,
	NotificationElicitationComplete, NotificationTasksStatus,
}

// TestWireExamplesFollowTheirEra checks the examples themselves against
// the rules of their era, so that the tests built on them test the right
// thing: in 2026-07-28 every request carries the required _meta keys and
// every result a resultType, and no removed method appears; in 2025-11-25
// neither appears.
func TestWireExamplesFollowTheirEra(t *testing.T) {
	for _, ex := range wireExamples {
		var probe struct {
			JSONRPC *string `json:"jsonrpc"`
		}
		mustUnmarshal(t, []byte(ex.wire), &probe)
		if probe.JSONRPC == nil {
			continue // a bare value: no envelope to check
		}
		t.Run(ex.era+"/"+ex.name, func(t *testing.T) {
			m := mustDecode(t, ex.wire)
			var params struct {
				Meta Meta `json:"_meta"`
			}
			if m.IsRequest() && len(m.Params) > 0 {
				mustUnmarshal(t, m.Params, &params)
			}
			var result map[string]json.RawMessage
			if m.Result != nil {
				mustUnmarshal(t, m.Result, &result)
			}
			_, hasResultType := result["resultType"]
			switch ex.era {
			case eraModern:
				if slices.Contains(removedIn2026, m.Method) {
					t.Errorf("%s was removed in 2026-07-28", m.Method)
				}
				if m.IsRequest() {
					rm, err := ParseRequestMeta(params.Meta)
					if err != nil || rm.ProtocolVersion != Version20260728 || rm.ClientCapabilities == nil {
						t.Errorf("request without the required _meta: %+v, %v", rm, err)
					}
				}
				if m.Result != nil && !hasResultType {
					t.Error("result without resultType")
				}
			case eraLegacy:
				if _, ok := params.Meta[MetaProtocolVersion]; ok {
					t.Error("legacy request with per-request protocol version")
				}
				if hasResultType {
					t.Error("legacy result with resultType")
				}
			}
		})
	}
}

// TestWireDefaultsAreDropped pins where the round trip is not exact: a
// member sent with its default value (false, for these) decodes to the
// zero value and is left out on the way back, which means the same.
func TestWireDefaultsAreDropped(t *testing.T) {
	for _, tc := range []struct {
		c        codec
		in, want string
	}{
		{bare[CallToolResult](), `{"content":[],"isError":false}`, `{"content":[]}`},
		{bare[Content](), `{"type":"tool_result","toolUseId":"a","content":[],"isError":false}`,
			`{"type":"tool_result","toolUseId":"a","content":[]}`},
		{bare[ServerCapabilities](), `{"tools":{"listChanged":false},"resources":{"subscribe":false}}`,
			`{"tools":{},"resources":{}}`},
		{bare[SubscriptionFilter](), `{"toolsListChanged":false,"taskIds":[]}`, `{}`},
		{bare[PromptArgument](), `{"name":"vessel","required":false}`, `{"name":"vessel"}`},
		{bare[CompleteResult](), `{"completion":{"values":["a"],"hasMore":false}}`, `{"completion":{"values":["a"]}}`},
	} {
		out, err := tc.c([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if !jsonEqual(t, out, []byte(tc.want)) {
			t.Errorf("%s: got %s, want %s", tc.in, out, tc.want)
		}
	}
}

// mustDecode decodes one JSON-RPC message.
func mustDecode(t *testing.T, wire string) *Message {
	t.Helper()
	m, err := DecodeMessage([]byte(wire))
	if err != nil {
		t.Fatalf("%v\n%s", err, wire)
	}
	return m
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("unmarshal into %T: %v\n%s", v, err, data)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// payloadOf returns what an example carries: the params, result or error
// data of a JSON-RPC message, or the example itself when it is a bare value
// (no jsonrpc member).
func payloadOf(t *testing.T, wire string) json.RawMessage {
	t.Helper()
	var probe struct {
		JSONRPC *string `json:"jsonrpc"`
	}
	mustUnmarshal(t, []byte(wire), &probe)
	if probe.JSONRPC == nil {
		return json.RawMessage(wire)
	}
	p := messagePayload(mustDecode(t, wire))
	if len(p) == 0 {
		t.Fatalf("message has no payload:\n%s", wire)
	}
	return p
}

// payloadAs decodes the payload of an example (see payloadOf) into a T.
func payloadAs[T any](t *testing.T, wire string) T {
	t.Helper()
	var v T
	mustUnmarshal(t, payloadOf(t, wire), &v)
	return v
}

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A scripted OpenAI-compatible HTTP server for the agent's client tests.

Listens on 127.0.0.1, port 0 (or argv[1]), prints the port on stdout and
serves POST /v1/chat/completions and POST /v1/embeddings. It exits when its
stdin closes, so a test that dies cannot leave it behind.

The request's "model" picks the script: "BEHAVIOUR" or "BEHAVIOUR:TAG".
State (request counts) is kept per full model string, so each test uses
its own TAG and tests do not disturb each other.

chat behaviours
  normal        a seed-000 style answer
  echo          "n=<messages> last=<content of the last message>"
  auth          the Authorization header, or "none"
  params        "temperature=<t> max_tokens=<n>"
  malformed     200 with a body that is not JSON
  nochoices     {"choices": []}
  nullcontent   choices[0].message.content = null
  huge          content of 200000 bytes
  500-then-ok   HTTP 500 on the first request, then normal
  429-then-ok   HTTP 429 with Retry-After: 1 first, then normal
  always-500    HTTP 500 every time
  400           HTTP 400 with an OpenAI error body (must not be retried)
  slow          sleeps 3 s, then normal
  slow-N        sleeps N seconds (integer), then normal
  malformed-then-ok  200 with a body that is not JSON first, then normal
  501           HTTP 501 every time (must not be retried)
  503-date-then-ok   HTTP 503 with Retry-After as an HTTP-date 2 s ahead, then normal
  usage         normal, with usage prompt_tokens=120 completion_tokens=34
  caption       "A yellow lamp on a dark floor." (a caption model's answer)
  turn          a workflow turn as JSON after a line of prose: appends to
                "messages" and hands the turn to the first role the
                prompt's "You may hand the turn to:" line names
  turn-bad-first  prose without JSON on the first request, then turn
  html          200 with an HTML page (a web server, not an API, at the URL)
scripted models (they answer "as a model would", in the shape the request
asks for; the server kind decides which shapes it supports)
  news[-KIND]   the newsroom (scenarios/newsroom): the writer drafts, the
                reviewer sends the first draft back with a note (status
                revision) and passes the second, the editor writes the
                headline and hands to the approver. KIND:
                  (none)  tools and response_format json_schema
                  schema  tools refused with HTTP 400 ("does not support
                          tools"), response_format honoured
                  plain   tools refused with HTTP 400, response_format
                          ignored: answers are prose with the JSON inside
  news-err-once[-KIND]  the writer's first answer writes notes as a string
                (the broker refuses it: append needs a list); once a
                request tells it so, it answers correctly
  news-stubborn[-KIND]  the writer writes notes as a string, always
  news-reviewer-stubborn[-KIND]  the reviewer does, always
  explore[-KIND]  an explorer: act forward with a reason, a message to the
                first teammate the prompt names, in the request's shape
  explore-err-once[-KIND]  the first answer's action is "fly"; corrected
                once a request says the answer could not be used
  The probe of --llm-mode auto (a tool "ok", a schema named "ok") is
  answered as the kind allows.
control (per TAG, for every model string ending in :TAG)
  GET /control/down/TAG   chat requests of that tag get HTTP 503 from now on
  GET /control/up/TAG     and answer again
embeddings behaviours (DIM defaults to 8)
  embed[-DIM]           deterministic vectors of DIM, unnormalised
  embed-reversed[-DIM]  same, items listed in reverse with their index
  embed-wrongdim        one vector is one component short
  embed-nonnumeric      a component is a string
  embed-count           one item fewer than inputs
  embed-malformed       200 with a body that is not JSON
  embed-500-then-ok     HTTP 500 first, then embed
other paths
  GET /v1/models          a model list: normal, echo, usage
  GET /requests/MODEL     every request body received for that full model
                          string, oldest first (JSON list), to check them exactly
Python 3 standard library only.
"""
import email.utils
import hashlib
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NORMAL_ANSWER = """I looked around and decided.

```yaml
thinking: "I see new objects, the team should know"
action: forward
reason: "Continue exploring new areas"
message_to_others: "I found chair and lamp at position 3"
```
<MessageTo(Agent2, '''Check position 4 (the door) > now''')>
"""

counts = {}
requests = {}
down = set()
counts_lock = threading.Lock()


def bump(model, request):
    with counts_lock:
        counts[model] = counts.get(model, 0) + 1
        requests.setdefault(model, []).append(request)
        return counts[model]


def vector(text, dim):
    out = []
    for i in range(dim):
        digest = hashlib.sha256(f"{i}:{text}".encode()).digest()
        out.append(int.from_bytes(digest[:2], "little") / 65535.0 - 0.5)
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def chat_answer(self, content):
        return {"id": "chatcmpl-test", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}]}

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        try:
            request = json.loads(self.rfile.read(length))
        except ValueError:
            return self.send(400, {"error": {"message": "request is not JSON"}})
        model = str(request.get("model", ""))
        behaviour = model.split(":", 1)[0]
        n = bump(model, request)
        if self.path.endswith("/chat/completions"):
            return self.chat(request, behaviour, n)
        if self.path.endswith("/embeddings"):
            return self.embeddings(request, behaviour, n)
        return self.send(404, {"error": {"message": "no such path " + self.path}})

    def do_GET(self):
        if self.path.endswith("/v1/models"):
            return self.send(200, {"object": "list", "data": [
                {"id": name, "object": "model"} for name in ("normal", "echo", "usage")]})
        for verb in ("down", "up"):
            prefix = "/control/" + verb + "/"
            if self.path.startswith(prefix):
                tag = urllib.parse.unquote(self.path[len(prefix):])
                with counts_lock:
                    (down.add if verb == "down" else down.discard)(tag)
                return self.send(200, {"tag": tag, "down": verb == "down"})
        if self.path.startswith("/requests/"):
            model = urllib.parse.unquote(self.path[len("/requests/"):])
            with counts_lock:
                return self.send(200, {"requests": requests.get(model, [])})
        return self.send(404, {"error": {"message": "no such path " + self.path}})

    def chat(self, request, behaviour, n):
        messages = request.get("messages", [])
        tag = str(request.get("model", "")).rsplit(":", 1)[-1]
        with counts_lock:
            is_down = tag in down
        if is_down:
            return self.send(503, {"error": {"message": "the model is down (scripted)"}})
        if behaviour.startswith("news") or behaviour.startswith("explore"):
            return self.scripted(request, behaviour)
        if behaviour == "html":
            page = b"<!doctype html><html><body><h1>Welcome</h1></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return None
        if behaviour == "normal":
            return self.send(200, self.chat_answer(NORMAL_ANSWER))
        if behaviour == "echo":
            last = messages[-1]["content"] if messages else ""
            return self.send(200, self.chat_answer(f"n={len(messages)} last={last}"))
        if behaviour == "auth":
            return self.send(200, self.chat_answer(self.headers.get("Authorization", "none")))
        if behaviour == "params":
            return self.send(200, self.chat_answer(
                f"temperature={request.get('temperature')} max_tokens={request.get('max_tokens')}"))
        if behaviour == "malformed":
            return self.send(200, b'{"choices": [ {"message": ')
        if behaviour == "nochoices":
            return self.send(200, {"choices": []})
        if behaviour == "nullcontent":
            return self.send(200, {"choices": [{"message": {"role": "assistant", "content": None}}]})
        if behaviour == "huge":
            return self.send(200, self.chat_answer("x" * 200000))
        if behaviour == "500-then-ok" and n == 1:
            return self.send(500, {"error": {"message": "internal error, try again"}})
        if behaviour == "429-then-ok" and n == 1:
            return self.send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
        if behaviour == "always-500":
            return self.send(500, {"error": {"message": "down for good"}})
        if behaviour == "400":
            return self.send(400, {"error": {"message": "model not found"}})
        if behaviour == "malformed-then-ok" and n == 1:
            return self.send(200, b'{"choices": [ {"message": ')
        if behaviour == "501":
            return self.send(501, {"error": {"message": "not implemented here"}})
        if behaviour == "503-date-then-ok" and n == 1:
            when = email.utils.formatdate(time.time() + 2, usegmt=True)
            return self.send(503, {"error": {"message": "busy"}}, {"Retry-After": when})
        if behaviour == "caption":
            return self.send(200, self.chat_answer("A yellow lamp\non a dark floor.\n"))
        if behaviour == "usage":
            answer = self.chat_answer(NORMAL_ANSWER)
            answer["usage"] = {"prompt_tokens": 120, "completion_tokens": 34, "total_tokens": 154}
            return self.send(200, answer)
        if behaviour in ("turn", "turn-bad-first"):
            if behaviour == "turn-bad-first" and n == 1:
                return self.send(200, self.chat_answer("I think the plan looks fine."))
            prompt = messages[1]["content"] if len(messages) > 1 else ""
            found = re.search(r"You may hand the turn to: ([^,.\s]+)", prompt)
            turn = {"ops": [{"op": "update", "key": "messages",
                             "value": [{"from": "model", "text": "a turn by the model"}]}],
                    "next": found.group(1) if found else "nobody", "summary": "the model's turn"}
            return self.send(200, self.chat_answer("My turn:\n" + json.dumps(turn)))
        if behaviour == "slow":
            time.sleep(3)
        if behaviour.startswith("slow-") and behaviour[5:].isdigit():
            time.sleep(int(behaviour[5:]))
        return self.send(200, self.chat_answer(NORMAL_ANSWER))

    # ---- scripted models --------------------------------------------------

    def scripted(self, request, behaviour):
        kind = "full"
        for suffix in ("-schema", "-plain"):
            if behaviour.endswith(suffix):
                kind, behaviour = suffix[1:], behaviour[:-len(suffix)]
        tools = request.get("tools")
        fmt = request.get("response_format")
        if tools and kind != "full":
            return self.send(400, {"error": {"message": "this model does not support tools"}})
        if fmt and kind == "plain":
            fmt = None                       # ignored, as an older server would
        names = [t.get("function", {}).get("name") for t in tools or []]
        if "ok" in names:                    # the answer mode's probe
            return self.shaped([("ok", {"value": True})], None, tools, fmt)
        if fmt and fmt.get("json_schema", {}).get("name") == "ok":
            return self.send(200, self.chat_answer(json.dumps({"value": True})))
        if behaviour.startswith("news"):
            return self.news(request, behaviour, tools, fmt)
        return self.explore(request, behaviour, tools, fmt)

    def shaped(self, calls, obj, tools, fmt):
        # One answer in the request's shape: tool calls when tools were
        # offered, the JSON object with a response_format, else prose.
        # Usage is an estimate (4 characters a token), as a server reports.
        length = int(self.headers.get("Content-Length", "0"))
        usage = {"prompt_tokens": length // 4, "completion_tokens": len(json.dumps(obj)) // 4}
        if tools:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(calls)]}
            return self.send(200, {"id": "chatcmpl-test", "object": "chat.completion",
                                   "choices": [{"index": 0, "finish_reason": "tool_calls",
                                                "message": message}], "usage": usage})
        text = json.dumps(obj) if fmt else "Here is my answer.\n" + json.dumps(obj) + "\n"
        return self.send(200, dict(self.chat_answer(text), usage=usage))

    @staticmethod
    def told_refused(messages):
        return any(("refused" in str(m.get("content") or "")
                    or "could not be used" in str(m.get("content") or ""))
                   for m in messages[2:])

    def news(self, request, behaviour, tools, fmt):
        messages = request.get("messages", [])
        prompt = messages[1]["content"] if len(messages) > 1 else ""
        role = (re.search(r"Your role: (\w+)", prompt) or [None, ""])[1]
        rounds = int((re.search(r'"iteration_count": (\d+)', prompt) or [None, "0"])[1])
        note_value = ["draft written"]
        if role == "writer" and (behaviour == "news-stubborn" or
                                 (behaviour == "news-err-once" and not self.told_refused(messages))):
            note_value = "draft written"     # append needs a list: the broker refuses it
        if role == "reviewer" and behaviour == "news-reviewer-stubborn":
            return self.shaped([("write_notes", {"value": "looks fine"}),
                                ("hand_over", {"next": "editor", "status": "in_progress",
                                               "summary": "passed"})],
                               {"ops": [{"op": "update", "key": "notes", "value": "looks fine"}],
                                "next": "editor", "status": "in_progress", "summary": "passed"},
                               tools, fmt)
        if role == "writer":
            ops = [("draft", f"The night bus, draft {rounds + 1}: it serves shift workers, "
                             "runs from 23:00 to 05:00, and riders say it is on time."),
                   ("notes", note_value)]
            turn = ("reviewer", "in_progress", f"draft {rounds + 1} written")
        elif role == "reviewer" and rounds == 0:
            ops = [("notes", ["say when the last bus leaves"])]
            turn = ("writer", "revision", "sent back: the last bus is missing")
        elif role == "reviewer":
            ops = [("notes", ["the draft answers the assignment"])]
            turn = ("editor", "in_progress", "passed to the editor")
        elif role == "editor":
            ops = [("headline", "Night bus runs on time, riders say")]
            turn = ("approver", "in_progress", "headline written")
        else:
            return self.send(200, self.chat_answer("I do not know which role I play."))
        calls = [("write_" + key, {"value": value}) for key, value in ops]
        calls.append(("hand_over", {"next": turn[0], "status": turn[1], "summary": turn[2]}))
        obj = {"ops": [{"op": "update", "key": k, "value": v} for k, v in ops],
               "next": turn[0], "status": turn[1], "summary": turn[2]}
        return self.shaped(calls, obj, tools, fmt)

    def explore(self, request, behaviour, tools, fmt):
        messages = request.get("messages", [])
        prompt = messages[1]["content"] if len(messages) > 1 else ""
        if isinstance(prompt, list):
            prompt = prompt[0].get("text", "")
        mates = re.search(r"teammates ([^;.,\s]+)", prompt)
        action = "forward"
        if behaviour == "explore-err-once" and not self.told_refused(messages):
            action = "fly"
        act = {"thinking": "Nobody has been ahead of me yet.", "action": action,
               "reason": "the positions ahead are not visited yet",
               "message_to_others": "I am heading forward"}
        calls = [("act", act)]
        obj = dict(act, message_to=[], listen_to=[])
        if mates:
            calls.append(("message_to", {"target": mates.group(1), "text": "I take the far side"}))
            obj["message_to"] = [{"target": mates.group(1), "text": "I take the far side"}]
        if not tools and not fmt:
            text = ("```yaml\nthinking: \"%s\"\naction: %s\nreason: \"%s\"\n```\n"
                    % (act["thinking"], action, act["reason"]))
            if mates:
                text += "<MessageTo(%s, '''I take the far side''')>\n" % mates.group(1)
            return self.send(200, self.chat_answer(text))
        return self.shaped(calls, obj, tools, fmt)

    def embeddings(self, request, behaviour, n):
        inputs = request.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        dim = 8
        parts = behaviour.rsplit("-", 1)
        if len(parts) == 2 and parts[1].isdigit():
            behaviour, dim = parts[0], int(parts[1])
        if behaviour == "embed-malformed":
            return self.send(200, b'{"data": [ {"embedding": [0.1, ')
        if behaviour == "embed-500-then-ok" and n == 1:
            return self.send(500, {"error": {"message": "warming up"}})
        data = [{"object": "embedding", "index": i, "embedding": vector(text, dim)}
                for i, text in enumerate(inputs)]
        if behaviour == "embed-reversed":
            data.reverse()
        if behaviour == "embed-wrongdim" and data:
            data[-1]["embedding"] = data[-1]["embedding"][:-1]
        if behaviour == "embed-nonnumeric" and data:
            data[0]["embedding"][0] = "x"
        if behaviour == "embed-count" and data:
            data.pop()
        return self.send(200, {"object": "list", "data": data, "model": request.get("model")})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Clients that time out or cap the body hang up on us: expected.
        pass


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = Server(("127.0.0.1", port), Handler)
    print(server.server_address[1], flush=True)

    def watch_stdin():
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()

// SPDX-License-Identifier: MIT
/*  check_web - parley-web: its HTTP and SSE server in process, the binary's
    flags and exit codes, a replay, and the page in a real browser.

    The server paths are tested over real sockets: bad paths are 404, bad
    methods 405 (with Allow), actions 403 when read-only and checked
    (415, 400, 413) when allowed, and the event stream's framing is read
    byte for byte from a raw HTTP/1.0 connection (no chunking, so what is
    read is exactly what the browser's EventSource parses).

    The browser test starts a broker, three heuristic parley-agents and
    parley-web, then runs tests/web/view.test.js: headless Debian chromium
    driven by puppeteer-core (installed by scripts/deps.sh into
    tests/web/node_modules), which waits until the page shows three agents
    and every object found, fails on any console error and saves a
    screenshot as build/<rel|san>/web-view.png; the static page (/?static=1)
    is then drawn by chromium alone with --virtual-time-budget, as
    docs/WEB.md says to take a screenshot (build/<rel|san>/web-static.png);
    then the run's recording is served with --replay and the page's time
    slider is driven back and forth (build/<rel|san>/web-replay.png). The
    workflow panel has its own suite, check_web_workflow.
*/
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <czmq.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/stat.h>
#include "pclock.h"
#include "pcurve.h"
#include "tools/web/web_hub.h"
#include "tools/web/web_server.h"
#include "lib/testbroker.h"
#include "lib/testclient.h"
#include "lib/testweb.h"
#include "lib/tproc.h"
#include "lib/testsuite.h"

#define DEADLINE_MS 60000

//  --- the server in process ----------------------------------------------

START_TEST (test_paths)
{
    web_hub_t *hub = web_hub_new (100, false);
    char why [256];
    web_server_t *server = web_server_new ("127.0.0.1:0", hub, NULL, NULL, why, sizeof why);
    ck_assert_msg (server, "%s", why);
    uint16_t port = web_server_port (server);
    ck_assert_int_gt (port, 0);

    testweb_reply_t page = testweb_http (port, "GET", "/", NULL, NULL, 0);
    ck_assert_int_eq (page.status, 200);
    ck_assert_str_eq (page.type, "text/html; charset=utf-8");
    ck_assert_ptr_nonnull (strstr (page.body, "<title>Parley"));
    //  Nothing from the network: no absolute URL in the page.
    ck_assert_ptr_null (strstr (page.body, "http://"));
    ck_assert_ptr_null (strstr (page.body, "https://"));
    free (page.body);
    testweb_expect (port, "GET", "/app.js", 200, NULL);
    testweb_expect (port, "GET", "/app.css", 200, NULL);
    testweb_expect (port, "HEAD", "/", 200, NULL);

    testweb_expect (port, "GET", "/nope", 404, NULL);
    testweb_expect (port, "GET", "/app.js/", 404, NULL);
    testweb_expect (port, "GET", "/../etc/passwd", 404, NULL);
    testweb_expect (port, "GET", "/api/frame/", 404, NULL);
    testweb_expect (port, "GET", "/api/frame/abc", 404, NULL);
    testweb_expect (port, "GET", "/api/frame/-1", 404, NULL);
    testweb_expect (port, "GET", "/api/frame/99999999999999999999999", 404, NULL);
    testweb_expect (port, "GET", "/api/frame/7", 404, NULL);
    testweb_expect (port, "POST", "/nope", 404, NULL);

    testweb_expect (port, "DELETE", "/", 405, "GET, HEAD");
    testweb_expect (port, "PUT", "/events", 405, "GET, HEAD");
    testweb_expect (port, "OPTIONS", "/app.js", 405, "GET, HEAD");
    testweb_expect (port, "POST", "/events", 405, "GET, HEAD");
    testweb_expect (port, "GET", "/api/actions/world-reset", 405, "POST");
    testweb_expect (port, "GET", "/api/actions/resume", 405, "POST");
    testweb_expect (port, "POST", "/api/actions/nope", 404, NULL);
    testweb_expect (port, "POST", "/api/model", 405, "GET, HEAD");
    //  No read handler (a replay): the workflow's reads are 404.
    testweb_expect (port, "GET", "/api/workflow", 404, NULL);
    testweb_expect (port, "GET", "/api/workflow/checkpoint/1", 404, NULL);
    //  The model as one document (the static page's source).
    ck_assert (web_hub_state (hub, "plan", 3, json_string ("go")));
    testweb_reply_t model = testweb_http (port, "GET", "/api/model", NULL, NULL, 0);
    ck_assert_int_eq (model.status, 200);
    ck_assert_str_eq (model.type, "application/json");
    json_t *parsed = json_loads (model.body, 0, NULL);
    ck_assert_msg (parsed && json_is_null (json_object_get (parsed, "workflow")), "%s", model.body);
    ck_assert_str_eq (json_string_value (json_object_get (json_object_get (json_object_get (
                          parsed, "state"), "plan"), "value")), "go");
    json_decref (parsed);
    free (model.body);

    //  Read-only: every action is 403, whatever its body.
    testweb_reply_t refused = testweb_http (port, "POST", "/api/actions/world-reset", "application/json", "{}", 2);
    ck_assert_int_eq (refused.status, 403);
    ck_assert_ptr_nonnull (strstr (refused.body, "--allow-actions"));
    free (refused.body);
    refused = testweb_http (port, "POST", "/api/actions/state-set", "application/json",
                      "{\"key\":\"a\",\"value\":1}", 21);
    ck_assert_int_eq (refused.status, 403);
    free (refused.body);
    refused = testweb_http (port, "POST", "/api/actions/resume", "application/json",
                            "{\"checkpoint\":1}", 16);
    ck_assert_int_eq (refused.status, 403);
    free (refused.body);
    refused = testweb_http (port, "POST", "/api/actions/submit", "application/json",
                            "{\"role\":\"r\"}", 12);
    ck_assert_int_eq (refused.status, 403);
    free (refused.body);

    //  A frame kept by the hub is served whole.
    web_hub_message (hub, 7, json_pack ("{s:i}", "tseq", 7),
                     json_pack ("{s:i,s:{s:s}}", "tseq", 7, "msg", "t", "SEND"));
    testweb_reply_t frame = testweb_http (port, "GET", "/api/frame/7", NULL, NULL, 0);
    ck_assert_int_eq (frame.status, 200);
    ck_assert_str_eq (frame.body, "{\"tseq\":7,\"msg\":{\"t\":\"SEND\"}}");
    free (frame.body);

    web_hub_stop (hub);
    web_server_destroy (&server);
    ck_assert_ptr_null (server);
    web_hub_destroy (&hub);
}
END_TEST

typedef struct {
    int calls;
    web_action_t action;
    char request [256];
    int status;
} s_actions_t;

static int
s_action (void *arg, web_action_t action, const json_t *request, char *why, size_t why_size)
{
    s_actions_t *seen = (s_actions_t *) arg;
    seen->calls++;
    seen->action = action;
    char *text = json_dumps (request, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf (seen->request, sizeof seen->request, "%s", text);
    free (text);
    if (seen->status != 200)
        snprintf (why, why_size, "refused by the test");
    return seen->status;
}

START_TEST (test_actions)
{
    web_hub_t *hub = web_hub_new (100, false);
    s_actions_t seen = { .status = 200 };
    char why [256];
    web_server_t *server = web_server_new ("127.0.0.1:0", hub, s_action, &seen, why, sizeof why);
    ck_assert_msg (server, "%s", why);
    uint16_t port = web_server_port (server);

    //  Not JSON by type: a cross-site form cannot send application/json.
    testweb_reply_t reply = testweb_http (port, "POST", "/api/actions/world-reset", "text/plain", "{}", 2);
    ck_assert_int_eq (reply.status, 415);
    free (reply.body);
    reply = testweb_http (port, "POST", "/api/actions/world-reset",
                    "application/x-www-form-urlencoded", "seed=1", 6);
    ck_assert_int_eq (reply.status, 415);
    free (reply.body);
    reply = testweb_http (port, "POST", "/api/actions/state-set", "application/json", "{nope", 5);
    ck_assert_int_eq (reply.status, 400);
    free (reply.body);
    reply = testweb_http (port, "POST", "/api/actions/state-set", "application/json", "[1]", 3);
    ck_assert_int_eq (reply.status, 400);
    free (reply.body);
    //  Over the limit: 413, and the handler never sees it.
    size_t big = WEB_SERVER_MAX_BODY + 10;
    char *huge = (char *) malloc (big);
    memset (huge, ' ', big);
    huge [0] = '{';
    huge [big - 1] = '}';
    reply = testweb_http (port, "POST", "/api/actions/state-set", "application/json", huge, big);
    ck_assert_int_eq (reply.status, 413);
    free (reply.body);
    free (huge);
    ck_assert_int_eq (seen.calls, 0);

    reply = testweb_http (port, "POST", "/api/actions/state-set", "application/json; charset=utf-8",
                    "{\"key\":\"plan\",\"value\":\"go\"}", 27);
    ck_assert_int_eq (reply.status, 200);
    free (reply.body);
    ck_assert_int_eq (seen.calls, 1);
    ck_assert_int_eq (seen.action, WEB_ACTION_STATE_SET);
    ck_assert_str_eq (seen.request, "{\"key\":\"plan\",\"value\":\"go\"}");

    seen.status = 409;
    reply = testweb_http (port, "POST", "/api/actions/world-reset", "application/json", "", 0);
    ck_assert_int_eq (reply.status, 409);
    ck_assert_ptr_nonnull (strstr (reply.body, "refused by the test"));
    free (reply.body);
    ck_assert_int_eq (seen.action, WEB_ACTION_WORLD_RESET);
    ck_assert_str_eq (seen.request, "{}");

    web_hub_stop (hub);
    web_server_destroy (&server);
    web_hub_destroy (&hub);
}
END_TEST

START_TEST (test_stream_framing)
{
    web_hub_t *hub = web_hub_new (100, false);
    web_hub_set_info (hub, json_pack ("{s:s}", "mode", "live"));
    ck_assert (web_hub_state (hub, "plan", 3, json_string ("old")));
    char why [256];
    web_server_t *server = web_server_new ("127.0.0.1:0", hub, NULL, NULL, why, sizeof why);
    ck_assert_msg (server, "%s", why);
    testweb_stream_t *stream = testweb_stream_open (web_server_port (server), "/events");
    //  The model first, whole, as one "init" event.
    ck_assert_msg (testweb_stream_wait (stream, "\n\n", 5000), "no init: %s", stream->buf);
    ck_assert_msg (strncmp (stream->buf, "HTTP/1.", 7) == 0 && strstr (stream->buf, " 200 OK\r\n"),
                   "%s", stream->buf);
    //  HTTP/1.0: no chunked encoding, the bytes are the events.
    ck_assert_ptr_null (strstr (stream->buf, "Transfer-Encoding"));
    ck_assert_ptr_nonnull (strstr (stream->buf, "Content-Type: text/event-stream\r\n"));
    const char *body = strstr (stream->buf, "\r\n\r\n");
    ck_assert_ptr_nonnull (body);
    ck_assert_str_eq (body + 4, "retry: 1000\nevent: init\nid: 2\ndata: {\"info\":{\"mode\":\"live\"},"
        "\"state\":{\"plan\":{\"key\":\"plan\",\"seq\":3,\"value\":\"old\"}},\"agents\":[],"
        "\"world\":null,\"recent\":[],\"trails\":{},\"workflow\":null}\n\n");
    size_t mark = stream->size;
    ck_assert_int_eq (web_hub_streams (hub), 1);

    //  A stale update (the tap repeating what the snapshot had) is not sent.
    ck_assert (!web_hub_state (hub, "plan", 3, json_string ("stale")));
    ck_assert (web_hub_state (hub, "plan", 4, json_string ("new")));
    web_hub_agents (hub, json_pack ("[{s:s}]", "agent", "A"));
    web_hub_agents (hub, json_pack ("[{s:s}]", "agent", "A"));     //  unchanged: nothing
    web_hub_event (hub, "world", json_pack ("{s:s,s:f}", "event", "explored", "coverage", 0.5));
    ck_assert_msg (testweb_stream_wait (stream, "event: world", 5000), "%s", stream->buf);
    ck_assert_msg (testweb_stream_wait (stream, "0.5}\n\n", 5000), "%s", stream->buf);
    ck_assert_str_eq (stream->buf + mark,
        "event: state\nid: 3\ndata: {\"key\":\"plan\",\"seq\":4,\"value\":\"new\"}\n\n"
        "event: agents\nid: 4\ndata: [{\"agent\":\"A\"}]\n\n"
        "event: world\nid: 5\ndata: {\"event\":\"explored\",\"coverage\":0.5}\n\n");
    ck_assert_uint_eq (web_hub_published (hub), 5);

    //  Stopping ends the stream cleanly (the connection closes).
    web_hub_stop (hub);
    web_server_destroy (&server);
    char byte;
    ck_assert_int_eq (read (stream->fd, &byte, 1), 0);
    testweb_stream_close (&stream);
    web_hub_destroy (&hub);
}
END_TEST

START_TEST (test_hub_ring)
{
    web_hub_t *hub = web_hub_new (4, false);
    uint64_t cursor;
    char *init = web_hub_start (hub, &cursor);
    ck_assert_ptr_nonnull (strstr (init, "event: init\n"));
    free (init);
    bool stopped = false;
    //  Nothing new: NULL after the timeout.
    ck_assert_ptr_null (web_hub_next (hub, &cursor, 10, &stopped));
    ck_assert (!stopped);
    //  A reader that fell behind the ring is told to start again.
    for (int i = 0; i < 10; i++)
        web_hub_event (hub, "dropped", json_pack ("{s:i}", "count", i));
    char *text = web_hub_next (hub, &cursor, 10, &stopped);
    ck_assert_str_eq (text, "event: reset\ndata: {}\n\n");
    free (text);
    web_hub_event (hub, "end", json_object ());
    text = web_hub_next (hub, &cursor, 10, &stopped);
    ck_assert_str_eq (text, "event: end\nid: 11\ndata: {}\n\n");
    free (text);
    //  Trails: every new position of an agent, from the positions key.
    web_hub_state (hub, "world.agent_positions", 1, json_pack ("{s:i}", "A", 3));
    web_hub_state (hub, "world.agent_positions", 2, json_pack ("{s:i,s:i}", "A", 3, "B", 0));
    web_hub_state (hub, "world.agent_positions", 3, json_pack ("{s:i,s:i}", "A", 4, "B", 0));
    char *late = web_hub_start (hub, &cursor);
    ck_assert_msg (strstr (late, "\"trails\":{\"A\":[3,4],\"B\":[0]}"), "%s", late);
    free (late);
    web_hub_stream_closed (hub);
    //  Frames: the newest `capacity` are kept.
    for (uint64_t tseq = 1; tseq <= 6; tseq++)
        web_hub_message (hub, tseq, json_object (), json_pack ("{s:I}", "tseq", (json_int_t) tseq));
    ck_assert_ptr_null (web_hub_frame (hub, 2));
    char *frame = web_hub_frame (hub, 6);
    ck_assert_str_eq (frame, "{\"tseq\":6}");
    free (frame);
    web_hub_stop (hub);
    ck_assert_ptr_null (web_hub_next (hub, &cursor, 1000, &stopped));
    ck_assert (stopped);
    web_hub_stream_closed (hub);
    web_hub_destroy (&hub);
}
END_TEST

START_TEST (test_bind_values)
{
    struct sockaddr_storage address;
    char why [256];
    ck_assert (web_server_parse_bind ("127.0.0.1:8080", &address, why, sizeof why));
    ck_assert_int_eq (address.ss_family, AF_INET);
    ck_assert (web_server_parse_bind ("[::1]:0", &address, why, sizeof why));
    ck_assert_int_eq (address.ss_family, AF_INET6);
    ck_assert (web_server_parse_bind ("localhost:1", &address, why, sizeof why));
    const char *bad [] = { "8080", ":8080", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                           "127.0.0.1:80x", "example.org:80", "[::1:80", NULL };
    for (int i = 0; bad [i]; i++)
        ck_assert_msg (!web_server_parse_bind (bad [i], &address, why, sizeof why),
                       "%s accepted", bad [i]);
}
END_TEST

//  --- the binary ------------------------------------------------------------

START_TEST (test_flags_and_exit_codes)
{
    tproc_t *proc = tproc_run ((const char *[]) { "parley-web", "--help", NULL }, true);
    ck_assert_int_eq (tproc_status (proc), 0);
    const char *flags [] = { "--broker", "--bind", "--replay", "allow-actions", "--curve-key",
                             "--curve-server-key", "--ready-file", "PARLEY_WEB_BIND", "Exit codes", NULL };
    for (int i = 0; flags [i]; i++)
        ck_assert_msg (strstr (tproc_out (proc), flags [i]), "--help lacks %s", flags [i]);
    tproc_destroy (&proc);

    proc = tproc_run ((const char *[]) { "parley-web", "--bind", "nowhere", NULL }, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    ck_assert_ptr_nonnull (strstr (tproc_err (proc), "HOST:PORT"));
    tproc_destroy (&proc);
    proc = tproc_run ((const char *[]) { "parley-web", "--replay", "x", "--allow-actions", NULL }, true);
    ck_assert_int_eq (tproc_status (proc), 2);
    tproc_destroy (&proc);

    tproc_dir_t *dir = tproc_dir_new ();
    char *bad = tproc_dir_path (dir, "bad.rec");
    ck_assert (tproc_write_file (bad, "NOTATAP1xxxx"));
    proc = tproc_run ((const char *[]) { "parley-web", "--replay", bad, "--bind", "127.0.0.1:0", NULL }, true);
    ck_assert_int_eq (tproc_status (proc), 1);
    tproc_destroy (&proc);

    //  A port already taken: exit 3.
    web_hub_t *hub = web_hub_new (10, false);
    char why [256];
    web_server_t *server = web_server_new ("127.0.0.1:0", hub, NULL, NULL, why, sizeof why);
    char bind [64];
    snprintf (bind, sizeof bind, "127.0.0.1:%u", (unsigned) web_server_port (server));
    proc = tproc_run ((const char *[]) { "parley-web", "--bind", bind, "--broker", "tcp://127.0.0.1:1", NULL }, true);
    ck_assert_int_eq (tproc_status (proc), 3);
    tproc_destroy (&proc);
    //  No broker there: exit 3 after the connect timeout.
    proc = tproc_run ((const char *[]) { "parley-web", "--bind", "127.0.0.1:0", "--broker",
                                         "tcp://127.0.0.1:1", "--connect-timeout-ms", "300", NULL }, true);
    ck_assert_int_eq (tproc_status (proc), 3);
    tproc_destroy (&proc);
    web_hub_stop (hub);
    web_server_destroy (&server);
    web_hub_destroy (&hub);
    free (bad);
    tproc_dir_destroy (&dir);
}
END_TEST

//  /?static=1 with chromium's own --virtual-time-budget, as docs/WEB.md
//  says to take a screenshot: the page reads the model once and keeps
//  nothing open, so the budget runs out and chromium exits (the live page,
//  whose event stream never idles, would keep it running). The DOM it
//  dumps is the drawn page; the screenshot is build/<rel|san>/web-static.png.
static void
s_static_screenshot (const char *url, const char *bins)
{
    const char *chromium = getenv ("PARLEY_CHROMIUM")? getenv ("PARLEY_CHROMIUM"): "/usr/bin/chromium";
    char page [512], shot [1100], shot_flag [1200];
    snprintf (page, sizeof page, "%s?static=1", url);
    snprintf (shot, sizeof shot, "%s/../web-static.png", bins);
    snprintf (shot_flag, sizeof shot_flag, "--screenshot=%s", shot);
    const char *common [] = { "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                              "--hide-scrollbars", "--window-size=1280,900",
                              "--virtual-time-budget=5000" };
    const char *argv [16];
    size_t n = 0;
    argv [n++] = chromium;
    for (size_t i = 0; i < sizeof common / sizeof common [0]; i++)
        argv [n++] = common [i];
    argv [n++] = "--dump-dom";
    argv [n++] = page;
    argv [n] = NULL;
    tproc_t *dump = tproc_start (argv, false, NULL);
    int status = tproc_wait (dump, DEADLINE_MS);
    ck_assert_msg (status == 0, "chromium --dump-dom %s: %d\n%s", page, status, tproc_err (dump));
    ck_assert_msg (strstr (tproc_out (dump), "data-ready=\"1\""), "the static page did not draw: %.3000s",
                   tproc_out (dump));
    ck_assert_ptr_nonnull (strstr (tproc_out (dump), "objects found: "));
    tproc_destroy (&dump);
    argv [n - 2] = shot_flag;
    unlink (shot);
    tproc_t *camera = tproc_start (argv, false, NULL);
    status = tproc_wait (camera, DEADLINE_MS);
    ck_assert_msg (status == 0 && access (shot, R_OK) == 0, "chromium --screenshot %s: %d\n%s", page,
                   status, tproc_err (camera));
    tproc_destroy (&camera);
}

START_TEST (test_browser_live_and_replay)
{
    char script [1024], shot [1024];
    testweb_browser ("web-view.png", script, shot, sizeof script);
    const char *bins = getenv ("PARLEY_BIN_DIR");

    testbroker_t *broker = testbroker_start ((const char *[]) { "--seed", "7", "--world-size", "20", NULL });
    ck_assert_ptr_nonnull (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    char *ready = tproc_dir_path (dir, "web.ready");
    char *record = tproc_dir_path (dir, "run.rec");
    tproc_t *tap = tproc_start ((const char *[]) { "parley-tap", "--broker", testbroker_router (broker),
                                                   "--record", record, "--json", NULL }, true, NULL);
    tproc_t *web = tproc_start ((const char *[]) { "parley-web", "--broker", testbroker_router (broker),
        "--bind", "127.0.0.1:0", "--ready-file", ready, "--log-level", "info", NULL }, true, NULL);
    char *url = testweb_wait_url (ready, web);
    //  The tap is live before the agents start, so the recording is whole.
    ck_assert_msg (tproc_wait_for (tap, "\"kind\":\"frame\"", DEADLINE_MS), "tap: %s", tproc_err (tap));

    tproc_t *agents [3];
    for (int i = 0; i < 3; i++) {
        char id [16], memory [32];
        snprintf (id, sizeof id, "Agent%d", i + 1);
        snprintf (memory, sizeof memory, "mem%d", i + 1);
        char *memdir = tproc_dir_path (dir, memory);
        agents [i] = tproc_start ((const char *[]) { "parley-agent", "--broker", testbroker_router (broker),
            "--id", id, "--memory-dir", memdir, "--max-steps", "30", "--seed", "7",
            "--step-delay-ms", "150", "--log-level", "warn", NULL }, true, NULL);
        free (memdir);
    }
    tproc_t *node = tproc_start ((const char *[]) { "node", script, url, shot, "3", NULL }, false, NULL);
    //  The tap prints a JSON line per frame: read them while the browser
    //  works, or its stdout pipe fills, it stops reading the tap socket and
    //  the broker drops the frames the recording should have.
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS + 30000;
    while (!tproc_exited (node) && pclock_mono_ms () < deadline) {
        tproc_read (tap, 20);
        tproc_read (node, 20);
    }
    int status = tproc_wait (node, 1000);
    ck_assert_msg (status == 0, "the browser test failed (%d):\n%s\n%s\nparley-web:\n%s", status,
                   tproc_out (node), tproc_err (node), tproc_err (web));
    ck_assert_ptr_nonnull (strstr (tproc_out (node), "ok: 3 agents, every object found"));
    ck_assert_msg (access (shot, R_OK) == 0, "no screenshot at %s", shot);
    s_static_screenshot (url, bins);
    for (int i = 0; i < 3; i++) {
        while (!tproc_exited (agents [i]) && pclock_mono_ms () < deadline) {
            tproc_read (tap, 20);
            tproc_read (agents [i], 20);
        }
        ck_assert_int_eq (tproc_wait (agents [i], 1000), 0);
        tproc_destroy (&agents [i]);
    }
    ck_assert_ptr_null (strstr (tproc_out (tap), "\"kind\":\"dropped\""));
    tproc_signal (web, SIGTERM);
    ck_assert_int_eq (tproc_wait (web, DEADLINE_MS), 0);
    tproc_signal (tap, SIGINT);
    ck_assert_int_eq (tproc_wait (tap, DEADLINE_MS), 0);

    //  The run replayed from the recording: every frame, then "end".
    char *ready2 = tproc_dir_path (dir, "replay.ready");
    tproc_t *replay = tproc_start ((const char *[]) { "parley-web", "--replay", record,
        "--bind", "127.0.0.1:0", "--ready-file", ready2, NULL }, true, NULL);
    char *url2 = testweb_wait_url (ready2, replay);
    testweb_stream_t *stream = testweb_stream_open (testweb_port (url2), "/events");
    ck_assert_msg (testweb_stream_wait (stream, "event: end\n", DEADLINE_MS), "no end: %.2000s", stream->buf);
    ck_assert_ptr_nonnull (strstr (stream->buf, "\"mode\":\"replay\""));
    ck_assert_ptr_nonnull (strstr (stream->buf, "\"type\":\"STEP\""));     //  the agents' moves
    ck_assert_ptr_nonnull (strstr (stream->buf, "\"key\":\"world.explored_by_all\""));
    testweb_stream_close (&stream);
    //  And in the browser, with the slider.
    char shot2 [1024];
    snprintf (shot2, sizeof shot2, "%s/../web-replay.png", bins);
    tproc_t *node2 = tproc_start ((const char *[]) { "node", script, url2, shot2, "3", "replay", NULL },
                                  false, NULL);
    status = tproc_wait (node2, DEADLINE_MS + 30000);
    ck_assert_msg (status == 0, "the replay browser test failed (%d):\n%s\n%s", status,
                   tproc_out (node2), tproc_err (node2));
    ck_assert_ptr_nonnull (strstr (tproc_out (node2), "ok (replay): 3 agents, every object found"));
    tproc_destroy (&node2);
    tproc_signal (replay, SIGTERM);
    ck_assert_int_eq (tproc_wait (replay, DEADLINE_MS), 0);

    tproc_destroy (&replay);
    tproc_destroy (&node);
    tproc_destroy (&web);
    tproc_destroy (&tap);
    free (url);
    free (url2);
    free (ready);
    free (ready2);
    free (record);
    tproc_dir_destroy (&dir);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

//  The broker side the view relies on: after HELLO observe, reads and
//  nothing else; without it, not even reads.
START_TEST (test_observer_reads)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    testclient_t *client = testclient_new (testbroker_router (broker));
    pmsg_t *reply = testclient_call0 (client, PMSG_STATS);
    ck_assert_int_eq (testclient_error_code (reply), PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    penc_t *enc = testclient_begin (client, PMSG_HELLO, 2);
    penc_kv_cstr (enc, "agent", "View");
    penc_kv_bool (enc, "observe", true);
    reply = testclient_call (client);
    ck_assert_msg (reply && pmsg_type (reply) == PMSG_WELCOME, "%s", testclient_describe (reply));
    pmsg_destroy (&reply);
    const pmsg_type_t reads [] = { PMSG_STATS, PMSG_AGENTS, PMSG_SNAPSHOT };
    const pmsg_type_t replies [] = { PMSG_STATS_REPLY, PMSG_AGENT_LIST, PMSG_STATE };
    for (size_t i = 0; i < 3; i++) {
        reply = testclient_call0 (client, reads [i]);
        ck_assert_msg (reply && pmsg_type (reply) == replies [i], "%s: %s",
                       pmsg_type_name (reads [i]), testclient_describe (reply));
        pmsg_destroy (&reply);
    }
    const pmsg_type_t writes [] = { PMSG_HEARTBEAT, PMSG_WORLD_RESET, PMSG_PERCEIVE };
    for (size_t i = 0; i < 3; i++) {
        reply = testclient_call0 (client, writes [i]);
        ck_assert_msg (testclient_error_code (reply) == PERR_NOT_HELLO, "%s: %s",
                       pmsg_type_name (writes [i]), testclient_describe (reply));
        pmsg_destroy (&reply);
    }
    testclient_destroy (&client);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

//  --allow-actions against a real broker: a state key set from the page's
//  route shows up in the view's own stream.
START_TEST (test_actions_live)
{
    testbroker_t *broker = testbroker_start (NULL);
    ck_assert_ptr_nonnull (broker);
    tproc_dir_t *dir = tproc_dir_new ();
    char *ready = tproc_dir_path (dir, "web.ready");
    tproc_t *web = tproc_start ((const char *[]) { "parley-web", "--broker", testbroker_router (broker),
        "--bind", "127.0.0.1:0", "--ready-file", ready, "--allow-actions", NULL }, true, NULL);
    char *url = testweb_wait_url (ready, web);
    uint16_t port = testweb_port (url);
    testweb_stream_t *stream = testweb_stream_open (port, "/events");
    ck_assert (testweb_stream_wait (stream, "\"allow_actions\":true", DEADLINE_MS));
    const char *set = "{\"key\":\"plan\",\"value\":\"explore the east\"}";
    testweb_reply_t reply = testweb_http (port, "POST", "/api/actions/state-set", "application/json", set, strlen (set));
    ck_assert_msg (reply.status == 200, "%ld %s", reply.status, reply.body);
    free (reply.body);
    ck_assert_msg (testweb_stream_wait (stream, "\"key\":\"plan\",\"seq\":", DEADLINE_MS), "%s", stream->buf);
    ck_assert_ptr_nonnull (strstr (stream->buf, "\"value\":\"explore the east\""));
    //  The broker's own rules still apply: world.* is the broker's.
    const char *bad = "{\"key\":\"world.objects\",\"value\":1}";
    reply = testweb_http (port, "POST", "/api/actions/state-set", "application/json", bad, strlen (bad));
    ck_assert_msg (reply.status == 409 && strstr (reply.body, "BAD_FIELD"), "%ld %s", reply.status, reply.body);
    free (reply.body);
    reply = testweb_http (port, "POST", "/api/actions/world-reset", "application/json", "{\"seed\":3}", 10);
    ck_assert_msg (reply.status == 200, "%ld %s", reply.status, reply.body);
    free (reply.body);
    ck_assert_msg (testweb_stream_wait (stream, "\"event\":\"reset\"", DEADLINE_MS), "%s", stream->buf);
    testweb_stream_close (&stream);
    tproc_signal (web, SIGINT);
    ck_assert_int_eq (tproc_wait (web, DEADLINE_MS), 0);
    tproc_destroy (&web);
    free (url);
    free (ready);
    tproc_dir_destroy (&dir);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
}
END_TEST

//  With CURVE: the view reads and taps with a key that has the tap right,
//  and acts with it when it also has agent and admin; without the tap
//  right the broker refuses the observer and parley-web exits 1.
START_TEST (test_curve)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char keys [1024], allow [1024], server [1100], viewer [1100], stranger [1100], why [512];
    snprintf (keys, sizeof keys, "%s/keys", tproc_dir_name (dir));
    snprintf (allow, sizeof allow, "%s/allow", tproc_dir_name (dir));
    ck_assert_int_eq (mkdir (allow, 0700), 0);
    ck_assert_msg (pcurve_keygen (keys, "broker", NULL, PCURVE_RIGHT_AGENT, why, sizeof why) == 0, "%s", why);
    ck_assert_msg (pcurve_keygen (keys, "viewer", "*", PCURVE_RIGHT_TAP | PCURVE_RIGHT_AGENT | PCURVE_RIGHT_ADMIN,
                                  why, sizeof why) == 0, "%s", why);
    ck_assert_msg (pcurve_keygen (keys, "scout", "*", PCURVE_RIGHT_AGENT, why, sizeof why) == 0, "%s", why);
    snprintf (server, sizeof server, "%s/broker", keys);
    snprintf (viewer, sizeof viewer, "%s/viewer", keys);
    snprintf (stranger, sizeof stranger, "%s/scout", keys);
    char copy [4096];
    snprintf (copy, sizeof copy, "cp '%s' '%s' '%s/'", viewer, stranger, allow);
    ck_assert_int_eq (system (copy), 0);
    testbroker_t *broker = testbroker_start ((const char *[]) { "--curve-keys", keys,
                                                                "--curve-allow", allow, NULL });
    ck_assert_ptr_nonnull (broker);

    char *ready = tproc_dir_path (dir, "web.ready");
    tproc_t *web = tproc_start ((const char *[]) { "parley-web", "--broker", testbroker_router (broker),
        "--bind", "127.0.0.1:0", "--ready-file", ready, "--allow-actions", "--curve-key", viewer,
        "--curve-server-key", server, NULL }, true, NULL);
    char *url = testweb_wait_url (ready, web);
    uint16_t port = testweb_port (url);
    testweb_stream_t *stream = testweb_stream_open (port, "/events");
    //  The snapshot came through: the world's keys are in the model.
    ck_assert_msg (testweb_stream_wait (stream, "\"world.objects\"", DEADLINE_MS), "%s\n%s",
                   stream->buf, tproc_err (web));
    const char *set = "{\"key\":\"plan\",\"value\":7}";
    testweb_reply_t reply = testweb_http (port, "POST", "/api/actions/state-set", "application/json", set, strlen (set));
    ck_assert_msg (reply.status == 200, "%ld %s", reply.status, reply.body);
    free (reply.body);
    //  Seen twice: as a STATE_UPDATE on the tap, and as the WRITE frame.
    ck_assert_msg (testweb_stream_wait (stream, "\"key\":\"plan\",\"seq\":", DEADLINE_MS), "%s", stream->buf);
    ck_assert_msg (testweb_stream_wait (stream, "\"type\":\"WRITE\"", DEADLINE_MS), "%s", stream->buf);
    testweb_stream_close (&stream);
    tproc_signal (web, SIGTERM);
    ck_assert_int_eq (tproc_wait (web, DEADLINE_MS), 0);
    tproc_destroy (&web);

    //  A key without the tap right: refused, exit 1.
    tproc_t *refused = tproc_run ((const char *[]) { "parley-web", "--broker", testbroker_router (broker),
        "--bind", "127.0.0.1:0", "--curve-key", stranger, "--curve-server-key", server, NULL }, true);
    ck_assert_msg (tproc_status (refused) == 1, "%d: %s", tproc_status (refused), tproc_err (refused));
    ck_assert_ptr_nonnull (strstr (tproc_err (refused), "UNAUTHORIZED"));
    tproc_destroy (&refused);
    free (url);
    free (ready);
    ck_assert_int_eq (testbroker_stop (&broker), 0);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    signal (SIGPIPE, SIG_IGN);
    curl_global_init (CURL_GLOBAL_DEFAULT);
    Suite *suite = suite_create ("web");
    TCase *server = tcase_create ("server");
    tcase_add_test (server, test_paths);
    tcase_add_test (server, test_actions);
    tcase_add_test (server, test_stream_framing);
    tcase_add_test (server, test_hub_ring);
    tcase_add_test (server, test_bind_values);
    suite_add_tcase (suite, server);
    TCase *binary = tcase_create ("binary");
    tcase_set_timeout (binary, 150);
    tcase_add_test (binary, test_flags_and_exit_codes);
    tcase_add_test (binary, test_observer_reads);
    tcase_add_test (binary, test_actions_live);
    tcase_add_test (binary, test_curve);
    tcase_add_test (binary, test_browser_live_and_replay);
    suite_add_tcase (suite, binary);
    int rc = testsuite_run (suite);
    curl_global_cleanup ();
    return rc;
}

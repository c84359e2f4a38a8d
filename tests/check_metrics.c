// SPDX-License-Identifier: MIT
/*  check_metrics - the broker's Prometheus endpoint, scraped over real HTTP
    (libcurl) from a real broker: the page is read by tests/metrics_check.py
    (prometheus_client's parser plus strict checks of names, types, HELP and
    TYPE before samples, cumulative buckets ending in +Inf, _count equal to
    the +Inf bucket), then its values are compared with what the test did:
    requests and errors by type and code, latency counts, queued messages
    and bytes, agents and connections, journal syncs and bytes, and the
    model report an agent sent in HEARTBEAT; the journal's health under
    --fsync always, read while every answer over the ROUTER is held for a
    failed sync (the fault shim fails it). Also: other paths 404, other
    methods 405, --metrics-bind off serves nothing, a bad address exits 2,
    a port in use exits 3, and the checker itself rejects broken pages.
*/
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/testsuite.h"
#include "lib/tfault.h"
#include "lib/tproc.h"
#include "pclock.h"

//  The interpreter with Debian's python3-prometheus-client (a pyenv
//  python3 earlier in PATH usually lacks it): PARLEY_PYTHON, as make test
//  sets it, else Debian's.
static const char *
s_python (void)
{
    const char *python = getenv ("PARLEY_PYTHON");
    return python && *python ? python : "/usr/bin/python3";
}

static size_t
s_collect (char *data, size_t size, size_t count, void *arg)
{
    FILE *out = arg;
    return fwrite (data, size, count, out);
}

//  `method` on `url`; the status code, and the body in *body (caller frees).
static long
s_http (const char *method, const char *url, char **body)
{
    size_t len = 0;
    char *text = NULL;
    FILE *out = open_memstream (&text, &len);
    ck_assert_ptr_nonnull (out);
    CURL *curl = curl_easy_init ();
    ck_assert_ptr_nonnull (curl);
    curl_easy_setopt (curl, CURLOPT_URL, url);
    curl_easy_setopt (curl, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp (method, "HEAD") == 0)
        curl_easy_setopt (curl, CURLOPT_NOBODY, 1L);
    curl_easy_setopt (curl, CURLOPT_WRITEFUNCTION, s_collect);
    curl_easy_setopt (curl, CURLOPT_WRITEDATA, out);
    curl_easy_setopt (curl, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt (curl, CURLOPT_NOPROXY, "*");
    CURLcode rc = curl_easy_perform (curl);
    ck_assert_msg (rc == CURLE_OK, "%s %s: %s", method, url, curl_easy_strerror (rc));
    long status = 0;
    curl_easy_getinfo (curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup (curl);
    fclose (out);
    if (body)
        *body = text;
    else
        free (text);
    return status;
}

//  The metrics URL from the broker's ready file ("" when it has none).
static void
s_url (testbroker_t *broker, char *url, size_t size)
{
    char path [512];
    snprintf (path, sizeof path, "%s/ready", testbroker_dir (broker));
    FILE *file = fopen (path, "r");
    ck_assert_ptr_nonnull (file);
    char line [512];
    url [0] = 0;
    while (fgets (line, sizeof line, file))
        if (strncmp (line, "metrics=", 8) == 0) {
            line [strcspn (line, "\n")] = 0;
            snprintf (url, size, "%.200s", line + 8);
        }
    fclose (file);
}

//  Runs metrics_check.py on `page`; its exit status, and its JSON in *out.
static int
s_check_page (const char *page, json_t **out, char **err)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *path = tproc_dir_path (dir, "page.txt");
    ck_assert (tproc_write_file (path, page));
    char script [512];
    snprintf (script, sizeof script, "%s/metrics_check.py", getenv ("PARLEY_TEST_DIR"));
    tproc_t *py = tproc_run ((const char *[]) { s_python (), script, path, NULL }, false);
    ck_assert_ptr_nonnull (py);
    int status = tproc_status (py);
    if (out) {
        json_error_t error;
        *out = status == 0 ? json_loads (tproc_out (py), 0, &error) : NULL;
    }
    if (err)
        *err = strdup (tproc_err (py));
    tproc_destroy (&py);
    free (path);
    tproc_dir_destroy (&dir);
    return status;
}

//  Scrapes and checks the page; returns its JSON ({types, samples}).
static json_t *
s_scrape (const char *url)
{
    char *page = NULL;
    ck_assert_int_eq (s_http ("GET", url, &page), 200);
    json_t *json = NULL;
    char *err = NULL;
    int status = s_check_page (page, &json, &err);
    ck_assert_msg (status == 0 && json, "metrics_check.py (exit %d):\n%s\npage:\n%s",
                   status, err, page);
    free (err);
    free (page);
    return json;
}

static double
s_sample (json_t *page, const char *key)
{
    json_t *value = json_object_get (json_object_get (page, "samples"), key);
    ck_assert_msg (json_is_number (value), "no sample %s", key);
    return json_number_value (value);
}

static void
s_type (json_t *page, const char *family, const char *type)
{
    const char *got = json_string_value (json_object_get (json_object_get (page, "types"), family));
    ck_assert_msg (got && strcmp (got, type) == 0, "%s is %s, not %s", family,
                   got ? got : "missing", type);
}

static void
s_send (testclient_t *client, const char *to, const char *body)
{
    penc_t *enc = testclient_begin (client, PMSG_SEND, 1);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), 1);
    msgpack_pack_map (penc_packer (enc), 2);
    penc_kv_cstr (enc, "to", to);
    penc_kv_cstr (enc, "body", body);
    pmsg_t *reply = testclient_call (client);
    EXPECT (reply, PMSG_SENT);
    pmsg_destroy (&reply);
}

START_TEST (test_scrape)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *data = tproc_dir_path (dir, "data");
    testbroker_t *broker = testcheck_start ((const char *[]) {
        "--metrics-bind", "127.0.0.1:0", "--data-dir", data, "--fsync", "always", NULL });
    char url [256];
    s_url (broker, url, sizeof url);
    ck_assert_msg (strncmp (url, "http://127.0.0.1:", 17) == 0, "ready file metrics=%s", url);
    ck_assert (testbroker_log_contains (broker, "metrics at http://127.0.0.1:"));

    json_t *before = s_scrape (url);
    s_type (before, "parley_requests_total", "counter");
    s_type (before, "parley_request_errors_total", "counter");
    s_type (before, "parley_request_duration_seconds", "histogram");
    s_type (before, "parley_journal_fsync_duration_seconds", "histogram");
    s_type (before, "parley_journal_written_bytes_total", "counter");
    s_type (before, "parley_queued_messages", "gauge");
    s_type (before, "parley_queued_bytes", "gauge");
    s_type (before, "parley_messages_dropped_total", "counter");
    s_type (before, "parley_connections", "gauge");
    s_type (before, "parley_agents_online", "gauge");
    s_type (before, "parley_agent_model_calls_total", "counter");
    s_type (before, "parley_agent_prompt_tokens_total", "counter");
    s_type (before, "parley_agent_completion_tokens_total", "counter");
    s_type (before, "parley_agent_model_latency_seconds_total", "counter");
    s_type (before, "parley_agent_step", "gauge");
    ck_assert (s_sample (before, "parley_requests_total{type=\"HELLO\"}") == 0);
    ck_assert (s_sample (before, "parley_request_duration_seconds_count{type=\"SEND\"}") == 0);
    ck_assert (s_sample (before, "parley_queued_messages") == 0);
    double written_before = s_sample (before, "parley_journal_written_bytes_total");
    double syncs_before = s_sample (before, "parley_journal_fsync_duration_seconds_count");
    json_decref (before);

    //  Two agents; A1 mails A2 (queued, unread), reports its model use and
    //  takes step 7.
    testclient_t *a1 = testcheck_agent (broker, "A1");
    testclient_t *a2 = testcheck_agent (broker, "A2");
    s_send (a1, "A2", "hello");
    penc_t *enc = testclient_begin (a1, PMSG_HEARTBEAT, 4);
    penc_kv_uint (enc, "model_calls", 3);
    penc_kv_uint (enc, "model_prompt_tokens", 120);
    penc_kv_uint (enc, "model_completion_tokens", 45);
    penc_kv_uint (enc, "model_latency_ms", 1500);
    pmsg_t *reply = testclient_call (a1);
    EXPECT (reply, PMSG_OK);
    pmsg_destroy (&reply);
    enc = testclient_begin (a1, PMSG_ACT, 2);
    penc_kv_cstr (enc, "action", "stay");
    penc_kv_uint (enc, "step", 7);
    reply = testclient_call (a1);
    EXPECT (reply, PMSG_OBSERVATION);
    pmsg_destroy (&reply);
    //  Errors: STATS before HELLO, and a frame that is not msgpack.
    testclient_t *stranger = testclient_new (testbroker_router (broker));
    reply = testclient_call0 (stranger, PMSG_STATS);
    EXPECT_ERROR (reply, PERR_NOT_HELLO);
    pmsg_destroy (&reply);
    ck_assert_int_eq (testclient_send_raw (stranger, "\xc1", 1), 0);
    reply = testclient_recv (stranger, TESTCLIENT_TIMEOUT_MS);
    EXPECT_ERROR (reply, PERR_MALFORMED);
    pmsg_destroy (&reply);

    json_t *after = s_scrape (url);
    ck_assert (s_sample (after, "parley_requests_total{type=\"HELLO\"}") == 2);
    ck_assert (s_sample (after, "parley_requests_total{type=\"SEND\"}") == 1);
    ck_assert (s_sample (after, "parley_requests_total{type=\"STATS\"}") == 1);
    ck_assert (s_sample (after, "parley_requests_total{type=\"invalid\"}") == 1);
    ck_assert (s_sample (after, "parley_request_errors_total{code=\"NOT_HELLO\",type=\"STATS\"}") == 1);
    ck_assert (s_sample (after, "parley_request_errors_total{code=\"MALFORMED\",type=\"invalid\"}") == 1);
    ck_assert (s_sample (after, "parley_request_duration_seconds_count{type=\"HELLO\"}") == 2);
    ck_assert (s_sample (after, "parley_request_duration_seconds_bucket{le=\"+Inf\",type=\"SEND\"}") == 1);
    ck_assert (s_sample (after, "parley_request_duration_seconds_sum{type=\"SEND\"}") > 0);
    ck_assert (s_sample (after, "parley_queued_messages") == 1);
    ck_assert (s_sample (after, "parley_queued_bytes") == 5);
    ck_assert (s_sample (after, "parley_messages_accepted_total") == 1);
    ck_assert (s_sample (after, "parley_agents") == 2);
    ck_assert (s_sample (after, "parley_agents_online") == 2);
    ck_assert (s_sample (after, "parley_connections") >= 2);
    ck_assert (s_sample (after, "parley_agent_online{agent=\"A2\"}") == 1);
    ck_assert (s_sample (after, "parley_agent_inbox_messages{agent=\"A2\"}") == 1);
    ck_assert (s_sample (after, "parley_agent_step{agent=\"A1\"}") == 7);
    ck_assert (s_sample (after, "parley_agent_model_calls_total{agent=\"A1\"}") == 3);
    ck_assert (s_sample (after, "parley_agent_prompt_tokens_total{agent=\"A1\"}") == 120);
    ck_assert (s_sample (after, "parley_agent_completion_tokens_total{agent=\"A1\"}") == 45);
    ck_assert (s_sample (after, "parley_agent_model_latency_seconds_total{agent=\"A1\"}") == 1.5);
    //  The same per role: A1 has no role:<name> capability, so "-".
    ck_assert (s_sample (after, "parley_role_model_calls_total{role=\"-\"}") == 3);
    ck_assert (s_sample (after, "parley_role_prompt_tokens_total{role=\"-\"}") == 120);
    //  --fsync always: each journaled request is synced before its reply.
    ck_assert (s_sample (after, "parley_journal_written_bytes_total") > written_before);
    ck_assert (s_sample (after, "parley_journal_fsync_duration_seconds_count") > syncs_before);
    ck_assert (s_sample (after, "parley_journal_log_bytes") > 0);
    json_decref (after);

    //  Only GET and HEAD of /metrics.
    ck_assert_int_eq (s_http ("HEAD", url, NULL), 200);
    ck_assert_int_eq (s_http ("POST", url, NULL), 405);
    ck_assert_int_eq (s_http ("DELETE", url, NULL), 405);
    char other [300];
    snprintf (other, sizeof other, "%.*s/", (int) (strlen (url) - strlen ("/metrics")), url);
    ck_assert_int_eq (s_http ("GET", other, NULL), 404);
    snprintf (other, sizeof other, "%s/x", url);
    ck_assert_int_eq (s_http ("GET", other, NULL), 404);

    testclient_destroy (&stranger);
    testclient_destroy (&a1);
    testclient_destroy (&a2);
    testcheck_stop (&broker);
    free (data);
    tproc_dir_destroy (&dir);
}
END_TEST

START_TEST (test_off)
{
    //  The default, and "off" said aloud: no endpoint, no ready-file line.
    const char *const *cases [] = {
        NULL, (const char *[]) { "--metrics-bind", "off", NULL }
    };
    for (size_t i = 0; i < 2; i++) {
        testbroker_t *broker = testcheck_start (cases [i]);
        char url [256];
        s_url (broker, url, sizeof url);
        ck_assert_str_eq (url, "");
        ck_assert (!testbroker_log_contains (broker, "metrics at"));
        testcheck_stop (&broker);
    }
}
END_TEST

static void
s_expect_exit (const char *bind, int status, const char *message)
{
    tproc_t *proc = tproc_run ((const char *[]) {
        "parley-broker", "--router", "tcp://127.0.0.1:*", "--pub", "tcp://127.0.0.1:*",
        "--tap", "off", "--data-dir", "none", "--metrics-bind", bind, NULL }, true);
    ck_assert_ptr_nonnull (proc);
    ck_assert_msg (tproc_status (proc) == status && strstr (tproc_err (proc), message),
                   "--metrics-bind %s: exit %d, wanted %d with \"%s\":\n%s", bind,
                   tproc_status (proc), status, message, tproc_err (proc));
    tproc_destroy (&proc);
}

START_TEST (test_bad_bind)
{
    s_expect_exit ("9464", 2, "wants HOST:PORT or off");
    s_expect_exit ("127.0.0.1:99999", 2, "is not a port");
    s_expect_exit ("127.0.0.1:", 2, "is not a port");
    s_expect_exit ("127.0.0.1:-1", 2, "is not a port");
    s_expect_exit ("example.org:9464", 2, "is not an IPv4 address");
    s_expect_exit ("[::1:9464", 2, "is not an IPv4 address");
    s_expect_exit ("[fe80::zz]:9464", 2, "is not an IPv6 address");
    //  A port someone else holds: the network exit code, naming the address.
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge (fd, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    ck_assert_int_eq (bind (fd, (struct sockaddr *) &addr, sizeof addr), 0);
    ck_assert_int_eq (listen (fd, 1), 0);
    socklen_t len = sizeof addr;
    ck_assert_int_eq (getsockname (fd, (struct sockaddr *) &addr, &len), 0);
    char taken [64];
    snprintf (taken, sizeof taken, "127.0.0.1:%u", ntohs (addr.sin_port));
    s_expect_exit (taken, 3, "cannot serve metrics on 127.0.0.1:");
    close (fd);
}
END_TEST

//  The checker must be able to fail: pages that break a rule each.
START_TEST (test_checker_rejects)
{
    const char *head = "# HELP parley_x_seconds x\n# TYPE parley_x_seconds histogram\n";
    const char *bad [] = {
        //  not cumulative
        "parley_x_seconds_bucket{le=\"0.1\"} 2\nparley_x_seconds_bucket{le=\"+Inf\"} 1\n"
        "parley_x_seconds_sum 1\nparley_x_seconds_count 1\n",
        //  no +Inf
        "parley_x_seconds_bucket{le=\"0.1\"} 1\nparley_x_seconds_sum 1\nparley_x_seconds_count 1\n",
        //  _count differs from +Inf
        "parley_x_seconds_bucket{le=\"+Inf\"} 2\nparley_x_seconds_sum 1\nparley_x_seconds_count 1\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        char page [512];
        snprintf (page, sizeof page, "%s%s", head, bad [i]);
        ck_assert_msg (s_check_page (page, NULL, NULL) == 1, "accepted:\n%s", page);
    }
    const char *pages [] = {
        "# HELP parley_y y\n# TYPE parley_y counter\nparley_y 1\n",          //  no _total
        "parley_z_total 1\n# HELP parley_z_total z\n# TYPE parley_z_total counter\n",
        "# HELP other_total o\n# TYPE other_total counter\nother_total 1\n", //  no prefix
        "# HELP parley_g g\n# TYPE parley_g gauge\nparley_g{a=\"1\"} 1\nparley_g{a=\"1\"} 2\n",
        "# HELP parley_g g\n# TYPE parley_g gauge\nparley_g 1",                //  no newline
    };
    for (size_t i = 0; i < sizeof pages / sizeof pages [0]; i++)
        ck_assert_msg (s_check_page (pages [i], NULL, NULL) == 1, "accepted:\n%s", pages [i]);
    ck_assert_int_eq (s_check_page ("# HELP parley_g g\n# TYPE parley_g gauge\nparley_g 1\n",
                                    NULL, NULL), 0);
}
END_TEST

//  Under --fsync always a failed sync holds every answer until a snapshot
//  heals the journal: STATS (parley-ctl health) gets no answer then, and
//  the page is where a probe reads the journal's health.
START_TEST (test_journal_health_while_answers_held)
{
    tproc_dir_t *dir = tproc_dir_new ();
    char *data = tproc_dir_path (dir, "data");
    tfault_t *fault = tfault_new (data);
    ck_assert_ptr_nonnull (fault);
    tfault_setenv (fault);
    testbroker_t *broker = testcheck_start ((const char *[]) {
        "--metrics-bind", "127.0.0.1:0", "--data-dir", data, "--fsync", "always", NULL });
    tfault_unsetenv (fault);
    char url [256];
    s_url (broker, url, sizeof url);
    json_t *page = s_scrape (url);
    ck_assert (s_sample (page, "parley_journal_healthy") == 1);
    double heals = s_sample (page, "parley_journal_heals_total");
    json_decref (page);

    testclient_t *a = testcheck_agent (broker, "A");
    tfault_fail_sync (fault, -1);
    penc_t *enc = testclient_begin_set (a, "held");
    penc_kv_cstr (enc, "value", "1");
    ck_assert_int_eq (testclient_send (a), 0);
    int64_t deadline = pclock_mono_ms () + 30000;
    while (!testbroker_log_contains (broker, "nothing more is answered until")
       &&  pclock_mono_ms () < deadline)
        pclock_sleep_ms (20);
    ck_assert (testbroker_log_contains (broker, "nothing more is answered until"));
    page = s_scrape (url);
    ck_assert (s_sample (page, "parley_journal_healthy") == 0);
    ck_assert (s_sample (page, "parley_journal_sync_errors_total") >= 1);
    json_decref (page);

    //  The disk comes back: the snapshot heals the journal, the held
    //  answer goes out, and the page says so.
    tfault_fail_sync (fault, 0);
    pmsg_t *reply = testclient_recv (a, 30000);
    ck_assert_msg (reply && pmsg_type (reply) == PMSG_WRITTEN, "%s", testclient_describe (reply));
    pmsg_destroy (&reply);
    page = s_scrape (url);
    ck_assert (s_sample (page, "parley_journal_healthy") == 1);
    ck_assert (s_sample (page, "parley_journal_heals_total") == heals + 1);
    json_decref (page);
    testcheck_leave (&a);
    testcheck_stop (&broker);
    tfault_destroy (&fault);
    free (data);
    tproc_dir_destroy (&dir);
}
END_TEST

int
main (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
    Suite *suite = suite_create ("metrics");
    TCase *tc = tcase_create ("metrics");
    tcase_add_test (tc, test_scrape);
    tcase_add_test (tc, test_journal_health_while_answers_held);
    tcase_add_test (tc, test_off);
    tcase_add_test (tc, test_bad_bind);
    tcase_add_test (tc, test_checker_rejects);
    suite_add_tcase (suite, tc);
    int rc = testsuite_run (suite);
    curl_global_cleanup ();
    return rc;
}

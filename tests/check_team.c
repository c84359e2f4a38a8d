// SPDX-License-Identifier: MIT
/*  check_team - the team features with real processes: a real broker, real
    parley-agent processes over loopback, and parley-tap recording every
    frame.

    - A lone heuristic agent, its private memory on, explores a fixed 8x8
      world with a distinct object in every cell (tests/worlds/
      distinct8x8.json) within 1.1 x (cells - 1) steps, for three seeds.
      One agent alone is deterministic: its only inputs are its own
      observations, so this is a bound on behaviour, not on timing.
    - Each ablation switch changes only what it names, as seen on the tap
      (a STEP counts as the SEND, FETCH, WRITE, ACT or PERCEIVE whose part
      it carries; a key is read when the agent's replica follows it):
      --no-messages sends no message, LISTEN, fetch or write and reads no
      team.* key; --no-shared-positions leaves world.agent_positions out of
      what it reads and nothing else; --no-memory changes no frame at all (and
      stores no memory). The unswitched teammate sends what it always does.
    - The llm policy gets the same switches: against the scripted model
      server (tests/openai_server.py, whose answers carry a message to all
      and a MessageTo), --no-messages sends none of them, and the other
      switches change what they name.
    - parley-broker --start same puts every agent on position 0; an
      unknown placement is a usage error.
    - A late joiner learns the team's knowledge from the shared state: its
      first claim is a cell the earlier agent did not visit, and the earlier
      agent released its claim when it left.
*/
#include <check.h>
#include <czmq.h>
#include <jansson.h>
#include <signal.h>
#include "pclock.h"
#include "lib/openai_server.h"
#include "lib/testbroker.h"
#include "lib/testcheck.h"
#include "lib/testclient.h"
#include "lib/tproc.h"
#include "lib/testsuite.h"

#define DEADLINE_MS 90000

static tproc_t *
s_agent (const char *router, const char *id, const char *memdir, const char *const *extra)
{
    tproc_t *proc = tproc_agent (router, id, memdir, "warn", extra);
    ck_assert_ptr_nonnull (proc);
    return proc;
}

//  Value of "key=" in the SUMMARY line, as a number.
static uint64_t
s_summary (const char *out, const char *key)
{
    const char *line = strstr (out, "SUMMARY");
    ck_assert_msg (line, "no SUMMARY in:\n%s", out);
    char pattern[64];
    snprintf (pattern, sizeof (pattern), " %s=", key);
    const char *at = strstr (line, pattern);
    ck_assert_msg (at, "no %s in SUMMARY", key);
    return strtoull (at + strlen (pattern), NULL, 10);
}

static void
s_finish (tproc_t **agent)
{
    int status = tproc_wait (*agent, DEADLINE_MS);
    ck_assert_msg (status == 0, "agent exit %d\n%s\n%s", status, tproc_out (*agent),
                   tproc_err (*agent));
}

// ---------------------------------------------------------------------------

START_TEST (test_lone_agent_within_bound)
{
    char *world = testsuite_test_path ("worlds/distinct8x8.json");
    const uint64_t bound = (uint64_t) (1.1 * 63);
    for (int seed = 1; seed <= 3; seed++) {
        testbroker_t *broker = testbroker_start ((const char *[]) { "--world-file", world, NULL });
        ck_assert_ptr_nonnull (broker);
        tproc_dir_t *dir = tproc_dir_new ();
        char *mem = tproc_dir_path (dir, "mem");
        char seed_text[16];
        snprintf (seed_text, sizeof (seed_text), "%d", seed);
        tproc_t *agent = s_agent (testbroker_router (broker), "Lone", mem, (const char *[]) {
            "--max-steps", "500", "--seed", seed_text, "--quiet", NULL });
        s_finish (&agent);
        const char *out = tproc_out (agent);
        ck_assert_msg (strstr (out, "coverage=100%"), "%s", out);
        uint64_t steps = s_summary (out, "steps");
        ck_assert_msg (steps <= bound, "seed %d: %" PRIu64 " steps > %" PRIu64, seed, steps, bound);
        //  The memory was on: the agent stored (and so retrieved) its reasons.
        ck_assert_uint_gt (s_summary (out, "memories"), 0);
        tproc_destroy (&agent);
        free (mem);
        tproc_dir_destroy (&dir);
        ck_assert_int_eq (testbroker_stop (&broker), 0);
    }
    free (world);
}
END_TEST

// ---------------------------------------------------------------------------
//  The tap: record everything, then read one agent's requests back.

typedef struct {
    testbroker_t *broker;
    tproc_dir_t *dir;
    char *record;
    tproc_t *tap;
} taprun_t;

static void
s_tap_start (taprun_t *run, const char *const *broker_args)
{
    run->broker = testbroker_start (broker_args);
    ck_assert_ptr_nonnull (run->broker);
    run->dir = tproc_dir_new ();
    run->record = tproc_dir_path (run->dir, "tap.rec");
    //  Live, only HEARTBEATs are shown (to know it is subscribed); the
    //  record has every frame, read back after the run.
    run->tap = tproc_start ((const char *[]) { "parley-tap", "--broker",
        testbroker_router (run->broker), "--json", "--record", run->record,
        "--type", "HEARTBEAT,BYE", NULL }, true, NULL);
    ck_assert_ptr_nonnull (run->tap);
    //  The warm-up never says HELLO (its HEARTBEATs get NOT_HELLO, and are
    //  tapped all the same): an agent it left behind would count towards
    //  --team-size, so one agent could start alone, finish and leave before
    //  the other came, which then waited for its team for ever.
    testclient_t *client = testclient_new (testbroker_router (run->broker));
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    while (!strstr (tproc_out (run->tap), "\"kind\":\"frame\"")) {
        ck_assert_msg (pclock_mono_ms () < deadline, "the tap printed nothing: %s",
                       tproc_err (run->tap));
        pmsg_t *reply = testclient_call0 (client, PMSG_HEARTBEAT);
        EXPECT_ERROR (reply, PERR_NOT_HELLO);
        pmsg_destroy (&reply);
        tproc_read (run->tap, 100);
    }
    testclient_destroy (&client);
}

static int
s_count (const char *text, const char *needle)
{
    int count = 0;
    for (const char *at = strstr (text, needle); at; at = strstr (at + 1, needle))
        count++;
    return count;
}

//  Stops the tap once it has shown `agents` BYEs: an agent's BYE is its
//  last frame, and the tap gets frames in order, so the record then holds
//  everything the agents did (and nothing was dropped).
static void
s_tap_halt (taprun_t *run, int agents)
{
    int64_t deadline = pclock_mono_ms () + DEADLINE_MS;
    while (s_count (tproc_out (run->tap), "\"type\":\"BYE\"") < agents) {
        ck_assert_msg (pclock_mono_ms () < deadline, "the tap saw no BYE: %s",
                       tproc_out (run->tap));
        tproc_read (run->tap, 100);
    }
    tproc_signal (run->tap, SIGINT);
    ck_assert_int_eq (tproc_wait (run->tap, DEADLINE_MS), 0);
    ck_assert_ptr_null (strstr (tproc_out (run->tap), "\"kind\":\"dropped\""));
}

//  The JSON lines of `agent`'s frames in the record.
static json_t *
s_tap_lines (taprun_t *run, const char *agent)
{
    tproc_t *replay = tproc_tap ((const char *[]) { "--replay", run->record, "--json",
                                                    "--agent", agent, NULL });
    ck_assert_int_eq (tproc_status (replay), 0);
    json_t *lines = tproc_json_lines (tproc_out (replay));
    ck_assert_ptr_nonnull (lines);
    tproc_destroy (&replay);
    return lines;
}

static void
s_tap_stop (taprun_t *run)
{
    tproc_destroy (&run->tap);
    free (run->record);
    tproc_dir_destroy (&run->dir);
    ck_assert_int_eq (testbroker_stop (&run->broker), 0);
}

static const char *
s_str (json_t *line, const char *key)
{
    return json_string_value (json_object_get (line, key));
}

//  What `agent` asked of the broker: request types, and the state keys it
//  reads (by GET, or followed by its replica: a SNAPSHOT of the key). A
//  STEP counts as each request whose part it carries.
typedef struct {
    bool send, listen, fetch, write, get, perceive, act, agents;
    bool key_positions, key_explored, key_team;
    int write_team;                 //  WRITEs of team.* keys
} requests_t;

static requests_t
s_requests (json_t *lines, const char *agent)
{
    requests_t r;
    memset (&r, 0, sizeof (r));
    size_t i;
    json_t *line;
    json_array_foreach (lines, i, line) {
        const char *dir = s_str (line, "dir"), *peer = s_str (line, "peer");
        const char *type = s_str (line, "type");
        if (!dir || !peer || !type || !streq (dir, "in") || !streq (peer, agent))
            continue;
        r.send |= streq (type, "SEND");
        r.listen |= streq (type, "LISTEN");
        r.fetch |= streq (type, "FETCH");
        r.perceive |= streq (type, "PERCEIVE");
        r.act |= streq (type, "ACT");
        r.agents |= streq (type, "AGENTS");
        json_t *msg = json_object_get (line, "msg");
        if (streq (type, "STEP")) {
            r.send |= json_array_size (json_object_get (msg, "messages")) > 0;
            r.fetch |= json_integer_value (json_object_get (msg, "fetch")) > 0;
            r.act |= json_object_get (msg, "action") != NULL;
            r.perceive |= json_is_true (json_object_get (msg, "perceive"));
        }
        if (streq (type, "SNAPSHOT")) {
            const char *key = s_str (msg, "prefix");
            r.get = true;
            r.key_positions |= key && streq (key, "world.agent_positions");
            r.key_explored |= key && streq (key, "world.explored_by_all");
            r.key_team |= key && strncmp (key, "team.", 5) == 0;
        }
        if (streq (type, "WRITE")
        ||  (streq (type, "STEP") && json_array_size (json_object_get (msg, "ops")) > 0)) {
            r.write = true;
            json_t *ops = json_object_get (msg, "ops");
            for (size_t k = 0; k < json_array_size (ops); k++) {
                const char *key = s_str (json_array_get (ops, k), "key");
                r.write_team += key && strncmp (key, "team.", 5) == 0;
            }
        }
        if (streq (type, "GET")) {
            r.get = true;
            json_t *keys = json_object_get (msg, "keys");
            for (size_t k = 0; k < json_array_size (keys); k++) {
                const char *key = json_string_value (json_array_get (keys, k));
                r.key_positions |= key && streq (key, "world.agent_positions");
                r.key_explored |= key && streq (key, "world.explored_by_all");
                r.key_team |= key && strncmp (key, "team.", 5) == 0;
            }
        }
    }
    return r;
}

typedef struct {
    requests_t switched, other;
    uint64_t memories, suppressed;
} ablation_t;

//  Two agents on a 30-cell line for 10 steps each; Switched gets `flag`.
static ablation_t
s_ablation (const char *flag)
{
    taprun_t run;
    s_tap_start (&run, (const char *[]) { "--world-size", "30", "--tap-hwm", "100000", NULL });
    const char *common[] = { "--max-steps", "10", "--no-stop-when-explored",
                             "--team-size", "2", "--quiet", flag, NULL };
    char *mem1 = tproc_dir_path (run.dir, "m1"), *mem2 = tproc_dir_path (run.dir, "m2");
    tproc_t *switched = s_agent (testbroker_router (run.broker), "Switched", mem1, common);
    const char *plain[] = { "--max-steps", "10", "--no-stop-when-explored",
                            "--team-size", "2", "--quiet", NULL };
    tproc_t *other = s_agent (testbroker_router (run.broker), "Other", mem2, plain);
    s_finish (&switched);
    s_finish (&other);
    s_tap_halt (&run, 2);
    ablation_t result;
    result.memories = s_summary (tproc_out (switched), "memories");
    result.suppressed = s_summary (tproc_out (switched), "suppressed");
    json_t *lines = s_tap_lines (&run, "Switched");
    result.switched = s_requests (lines, "Switched");
    json_decref (lines);
    lines = s_tap_lines (&run, "Other");
    result.other = s_requests (lines, "Other");
    json_decref (lines);
    tproc_destroy (&switched);
    tproc_destroy (&other);
    free (mem1);
    free (mem2);
    s_tap_stop (&run);
    return result;
}

//  The frames every agent sends, switched or not.
static void
s_expect_base (const requests_t *r)
{
    ck_assert (r->perceive && r->act && r->get && r->agents && r->key_explored);
}

//  Everything on: the reference the switches are compared with.
static void
s_expect_all (const requests_t *r)
{
    s_expect_base (r);
    ck_assert_msg (r->send && r->listen && r->fetch && r->write,
                   "send %d listen %d fetch %d write %d", r->send, r->listen, r->fetch, r->write);
    ck_assert (r->key_positions && r->key_team);
    ck_assert_int_gt (r->write_team, 0);
}

START_TEST (test_ablations_on_tap)
{
    ablation_t none = s_ablation (NULL);
    s_expect_all (&none.switched);
    s_expect_all (&none.other);
    ck_assert_uint_gt (none.memories, 0);
    ck_assert_uint_eq (none.suppressed, 0);

    //  --no-messages: no SEND, LISTEN, FETCH, WRITE; no team.* key read.
    ablation_t quiet = s_ablation ("--no-messages");
    s_expect_base (&quiet.switched);
    ck_assert (!quiet.switched.send && !quiet.switched.listen && !quiet.switched.fetch);
    ck_assert (!quiet.switched.write && !quiet.switched.key_team);
    ck_assert (quiet.switched.key_positions);           //  not what it names
    ck_assert_uint_gt (quiet.suppressed, 0);           //  the policy did want to talk
    ck_assert_uint_gt (quiet.memories, 0);
    s_expect_all (&quiet.other);

    //  --no-shared-positions: world.agent_positions is not read; the rest is.
    ablation_t blind = s_ablation ("--no-shared-positions");
    s_expect_all (&(requests_t) { .send = blind.switched.send, .listen = blind.switched.listen,
        .fetch = blind.switched.fetch, .write = blind.switched.write, .get = blind.switched.get,
        .perceive = blind.switched.perceive, .act = blind.switched.act,
        .agents = blind.switched.agents, .key_positions = true,
        .key_explored = blind.switched.key_explored, .key_team = blind.switched.key_team,
        .write_team = blind.switched.write_team });
    ck_assert (!blind.switched.key_positions);
    ck_assert_uint_gt (blind.memories, 0);
    s_expect_all (&blind.other);

    //  --no-memory: the same frames as with everything on; nothing stored.
    ablation_t forgetful = s_ablation ("--no-memory");
    s_expect_all (&forgetful.switched);
    ck_assert_uint_eq (forgetful.memories, 0);
    ck_assert_uint_eq (forgetful.suppressed, 0);
    s_expect_all (&forgetful.other);
}
END_TEST

// ---------------------------------------------------------------------------

//  The cells `agent` wrote to team.visited, and its last claim written
//  (-2: none written, -1: released).
static void
s_written (json_t *lines, const char *agent, bool *visited, size_t cells, json_int_t *claim)
{
    *claim = -2;
    size_t i;
    json_t *line;
    json_array_foreach (lines, i, line) {
        const char *dir = s_str (line, "dir"), *peer = s_str (line, "peer");
        const char *type = s_str (line, "type");
        if (!dir || !peer || !type || !streq (dir, "in") || !streq (peer, agent)
        ||  (!streq (type, "WRITE") && !streq (type, "STEP")))
            continue;
        json_t *ops = json_object_get (json_object_get (line, "msg"), "ops");
        for (size_t k = 0; k < json_array_size (ops); k++) {
            json_t *op = json_array_get (ops, k);
            const char *key = s_str (op, "key");
            json_t *value = json_object_get (op, "value");
            if (!key || !value)
                continue;
            if (streq (key, "team.visited"))
                for (size_t v = 0; v < json_array_size (value); v++) {
                    json_int_t cell = json_integer_value (json_array_get (value, v));
                    if (cell >= 0 && (size_t) cell < cells)
                        visited[cell] = true;
                }
            if (streq (key, "team.claims")) {
                json_t *mine = json_object_get (value, agent);
                *claim = json_is_null (mine)? -1: json_integer_value (mine);
            }
        }
    }
}

//  The claim of `agent`'s first team report on the channel (-1: none).
static json_int_t
s_first_claim (json_t *lines, const char *agent)
{
    size_t i;
    json_t *line;
    json_array_foreach (lines, i, line) {
        const char *dir = s_str (line, "dir"), *peer = s_str (line, "peer");
        const char *type = s_str (line, "type");
        if (!dir || !peer || !type || !streq (dir, "in") || !streq (peer, agent)
        ||  (!streq (type, "SEND") && !streq (type, "STEP")))
            continue;
        json_t *messages = json_object_get (json_object_get (line, "msg"), "messages");
        for (size_t k = 0; k < json_array_size (messages); k++) {
            const char *body = s_str (json_array_get (messages, k), "body");
            json_t *report = body? json_loads (body, 0, NULL): NULL;
            json_t *claim = json_object_get (report, "claim");
            json_int_t value = json_is_integer (claim)? json_integer_value (claim): -1;
            json_decref (report);
            if (value >= 0)
                return value;
        }
    }
    return -1;
}

START_TEST (test_late_joiner)
{
    char *world = testsuite_test_path ("worlds/distinct8x8.json");
    taprun_t run;
    s_tap_start (&run, (const char *[]) { "--world-file", world, "--tap-hwm", "100000", NULL });
    char *mem1 = tproc_dir_path (run.dir, "m1"), *mem2 = tproc_dir_path (run.dir, "m2");
    //  Early explores 20 steps and leaves; then Late joins.
    tproc_t *early = s_agent (testbroker_router (run.broker), "Early", mem1, (const char *[]) {
        "--max-steps", "20", "--quiet", NULL });
    s_finish (&early);
    tproc_t *late = s_agent (testbroker_router (run.broker), "Late", mem2, (const char *[]) {
        "--max-steps", "3", "--quiet", NULL });
    s_finish (&late);
    s_tap_halt (&run, 2);
    bool visited[64] = { false };
    json_int_t claim;
    json_t *lines = s_tap_lines (&run, "Early");
    s_written (lines, "Early", visited, 64, &claim);
    json_decref (lines);
    size_t count = 0;
    for (int i = 0; i < 64; i++)
        count += visited[i];
    ck_assert_uint_ge (count, 20);           //  the start and 20 moves, none repeated
    ck_assert_int_eq (claim, -1);            //  released on leaving
    lines = s_tap_lines (&run, "Late");
    json_int_t first = s_first_claim (lines, "Late");
    json_decref (lines);
    ck_assert_int_ge (first, 0);
    ck_assert_msg (!visited[first], "Late claimed %lld, which Early had visited",
                   (long long) first);
    tproc_destroy (&early);
    tproc_destroy (&late);
    free (mem1);
    free (mem2);
    free (world);
    s_tap_stop (&run);
}
END_TEST

START_TEST (test_broker_start_flag)
{
    //  --start same: both agents start on position 0 (spread would put the
    //  second one at 3 on a line of 10); a placement that does not exist
    //  is a usage error that names the choices.
    testbroker_t *broker = testbroker_start ((const char *[]) { "--start", "same", NULL });
    ck_assert_ptr_nonnull (broker);
    tproc_t *agents[2];
    const char *ids[] = { "First", "Second" };
    for (int i = 0; i < 2; i++)
        agents[i] = s_agent (testbroker_router (broker), ids[i], "none", (const char *[]) {
            "--max-steps", "1", "--team-size", "2", NULL });
    for (int i = 0; i < 2; i++) {
        s_finish (&agents[i]);
        ck_assert_msg (strstr (tproc_out (agents[i]), "] step 1 pos 0 "), "%s", tproc_out (agents[i]));
        tproc_destroy (&agents[i]);
    }
    ck_assert_int_eq (testbroker_stop (&broker), 0);
    tproc_t *bad = tproc_run ((const char *[]) { "parley-broker", "--start", "corner", NULL }, true);
    ck_assert_int_eq (tproc_status (bad), 2);
    ck_assert_msg (strstr (tproc_err (bad), "--start must be spread, same or random"), "%s",
                   tproc_err (bad));
    tproc_destroy (&bad);
}
END_TEST

static const char *s_url;
static void server_up (void) { s_url = openai_server_start (); }
static void server_down (void) { openai_server_stop (); }

//  One llm agent for 3 steps with `flag`: what it asked of the broker.
static requests_t
s_llm_run (const char *flag, uint64_t *memories, uint64_t *suppressed)
{
    taprun_t run;
    s_tap_start (&run, (const char *[]) { "--tap-hwm", "100000", NULL });
    char *mem = tproc_dir_path (run.dir, "mem");
    tproc_t *agent = s_agent (testbroker_router (run.broker), "Model", mem, (const char *[]) {
        "--max-steps", "3", "--no-stop-when-explored", "--policy", "llm", "--llm-url", s_url,
        "--llm-model", "normal:team", "--quiet", flag, NULL });
    s_finish (&agent);
    *memories = s_summary (tproc_out (agent), "memories");
    *suppressed = s_summary (tproc_out (agent), "suppressed");
    ck_assert_uint_eq (s_summary (tproc_out (agent), "fallbacks"), 0);
    s_tap_halt (&run, 1);
    json_t *lines = s_tap_lines (&run, "Model");
    requests_t r = s_requests (lines, "Model");
    json_decref (lines);
    tproc_destroy (&agent);
    free (mem);
    s_tap_stop (&run);
    return r;
}

START_TEST (test_llm_honours_switches)
{
    uint64_t memories, suppressed;
    requests_t r = s_llm_run (NULL, &memories, &suppressed);
    s_expect_base (&r);
    ck_assert (r.send && r.fetch && r.write && r.key_positions && r.key_team);
    ck_assert_uint_gt (memories, 0);
    ck_assert_uint_eq (suppressed, 0);

    r = s_llm_run ("--no-messages", &memories, &suppressed);
    s_expect_base (&r);
    ck_assert (!r.send && !r.listen && !r.fetch && !r.write && !r.key_team);
    ck_assert (r.key_positions);
    ck_assert_uint_eq (suppressed, 6);          //  the model's 2 messages a step
    ck_assert_uint_gt (memories, 0);

    r = s_llm_run ("--no-shared-positions", &memories, &suppressed);
    s_expect_base (&r);
    ck_assert (r.send && r.fetch && r.write && r.key_team && !r.key_positions);

    r = s_llm_run ("--no-memory", &memories, &suppressed);
    s_expect_base (&r);
    ck_assert (r.send && r.fetch && r.write && r.key_positions && r.key_team);
    ck_assert_uint_eq (memories, 0);
}
END_TEST

int
main (void)
{
    Suite *s = suite_create ("team");
    TCase *tc = tcase_create ("team");
    tcase_set_timeout (tc, 300);
    tcase_add_test (tc, test_lone_agent_within_bound);
    tcase_add_test (tc, test_ablations_on_tap);
    tcase_add_test (tc, test_late_joiner);
    tcase_add_test (tc, test_broker_start_flag);
    suite_add_tcase (s, tc);
    TCase *llm = tcase_create ("llm");
    tcase_set_timeout (llm, 300);
    tcase_add_unchecked_fixture (llm, server_up, server_down);
    tcase_add_test (llm, test_llm_honours_switches);
    suite_add_tcase (s, llm);
    return testsuite_run (s);
}

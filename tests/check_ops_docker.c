// SPDX-License-Identifier: MIT
/*  check_ops_docker - docker-compose.yml, the Dockerfile, and the scripts
    the image relies on (scripts/runtime-packages.sh, scripts/docker-agent.sh).

    Every check runs the real tool: Debian's `docker-compose config -q` for
    the compose file (needs no engine), dpkg for the runtime packages. A
    missing tool is a failure, not a skip (see testops.h).
*/
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/testops.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

static testops_result_t
s_compose (const char *file, const char *profile, const char *command)
{
    char *argv [10] = { "docker-compose", "-f", (char *) file };
    int argc = 3;
    if (profile) {
        argv [argc++] = "--profile";
        argv [argc++] = (char *) profile;
    }
    argv [argc++] = "config";
    if (command)
        argv [argc++] = (char *) command;
    argv [argc] = NULL;
    return testops_run (testops_root (), argv);
}

//  The first port published beyond loopback in `docker-compose config`
//  output (a malloc'ed copy of its line), or NULL when every published
//  port is bound to 127.0.0.1. The output lists ports in short form,
//  "- HOST_IP:HOST_PORT:CONTAINER_PORT/tcp", under "ports:".
static char *
s_port_beyond_loopback (const char *config)
{
    const char *at = config;
    while ((at = strstr (at, "ports:\n"))) {
        //  The list items are indented as deep as "ports:" itself.
        const char *line_start = at;
        while (line_start > config && line_start [-1] != '\n')
            line_start--;
        size_t indent = (size_t) (at - line_start);
        at += strlen ("ports:\n");
        while (strncmp (at, line_start, indent) == 0 && at [indent] == '-') {
            const char *item = at + indent + 2;
            size_t len = strcspn (item, "\n");
            if (strncmp (item, "127.0.0.1:", 10) != 0)
                return strndup (item, len);
            at = item + len + (item [len] ? 1 : 0);
        }
    }
    return NULL;
}

//  A copy of the part of `docker-compose config` output about one
//  service, up to the next service (caller frees).
static char *
s_service (const char *config, const char *name)
{
    char header [64];
    snprintf (header, sizeof header, "\n  %s:\n", name);
    const char *start = strstr (config, header);
    ck_assert_msg (start, "no service %s in:\n%s", name, config);
    start++;
    const char *end = start + 1;
    while ((end = strstr (end, "\n  "))) {
        if (end [3] != ' ')
            break;
        end++;
    }
    return end ? strndup (start, (size_t) (end + 1 - start)) : strdup (start);
}

START_TEST (test_compose_config)
{
    testops_setup ();
    testops_require_tool ("docker-compose", "docker-compose");
    char file [TESTOPS_DIR_MAX + 64];
    snprintf (file, sizeof file, "%s/docker-compose.yml", testops_root ());
    testops_result_t r = s_compose (file, NULL, "-q");
    ck_assert_msg (r.status == 0 && r.output [0] == 0,
                   "docker-compose config -q (exit %d):\n%s", r.status, r.output);
    free (r.output);
    r = s_compose (file, "llm", "-q");
    ck_assert_msg (r.status == 0 && r.output [0] == 0,
                   "docker-compose --profile llm config -q (exit %d):\n%s", r.status, r.output);
    free (r.output);

    //  (docker-compose 1.29 lists services of every profile here.)
    r = s_compose (file, NULL, "--services");
    ck_assert_int_eq (r.status, 0);
    ck_assert_ptr_nonnull (strstr (r.output, "broker\n"));
    ck_assert_ptr_nonnull (strstr (r.output, "agent\n"));
    ck_assert_ptr_nonnull (strstr (r.output, "llm\n"));
    free (r.output);
    r = s_compose (file, "llm", NULL);
    ck_assert_int_eq (r.status, 0);
    ck_assert_ptr_nonnull (strstr (r.output, "image: ollama/ollama"));
    free (r.output);

    //  --scale agent=N needs an agent without a fixed name, hostname or
    //  published port, and with its memory on a volume.
    r = s_compose (file, NULL, NULL);
    ck_assert_int_eq (r.status, 0);
    char *agent = strstr (r.output, "\n  agent:\n");
    ck_assert_ptr_nonnull (agent);
    char *end = strstr (agent + 1, "\n  broker:\n");
    if (end)
        *end = 0;
    ck_assert_ptr_null (strstr (agent, "container_name:"));
    ck_assert_ptr_null (strstr (agent, "hostname:"));
    ck_assert_ptr_null (strstr (agent, "ports:"));
    ck_assert_ptr_nonnull (strstr (agent, "memory:/var/lib/parley"));
    ck_assert_ptr_nonnull (strstr (agent, "PARLEY_BROKER: tcp://broker:5555"));
    free (r.output);
}
END_TEST

//  Probes, start order, names, per-service settings and loopback ports.
START_TEST (test_compose_operations)
{
    testops_setup ();
    testops_require_tool ("docker-compose", "docker-compose");
    char file [TESTOPS_DIR_MAX + 64];
    snprintf (file, sizeof file, "%s/docker-compose.yml", testops_root ());
    testops_result_t r = s_compose (file, "llm", NULL);
    ck_assert_msg (r.status == 0, "docker-compose config:\n%s", r.output);
    char *beyond = s_port_beyond_loopback (r.output);
    ck_assert_msg (!beyond, "published beyond loopback: %s", beyond);
    char *tap = s_service (r.output, "tap");
    char *llm_pull = s_service (r.output, "llm-pull");
    char *llm = s_service (r.output, "llm");
    char *broker = s_service (r.output, "broker");
    char *agent = s_service (r.output, "agent");

    //  The broker is probed with parley-ctl health; the others wait for it.
    ck_assert_ptr_nonnull (strstr (broker, "    healthcheck:\n"));
    ck_assert_ptr_nonnull (strstr (broker, "      - parley-ctl\n"));
    ck_assert_ptr_nonnull (strstr (broker, "      - health\n"));
    ck_assert_ptr_nonnull (strstr (broker, "      - /var/lib/parley-team/team\n"));
    const char *waits = "    depends_on:\n      broker:\n        condition: service_healthy\n";
    ck_assert_msg (strstr (agent, waits), "agent:\n%s", agent);
    ck_assert_msg (strstr (tap, waits), "tap:\n%s", tap);
    ck_assert_ptr_nonnull (strstr (llm, "    healthcheck:\n"));
    ck_assert_ptr_nonnull (strstr (llm_pull, "      llm:\n        condition: service_healthy\n"));

    //  Readable names where a service runs once.
    ck_assert_ptr_nonnull (strstr (broker, "    container_name: parley-broker\n"));
    ck_assert_ptr_nonnull (strstr (broker, "    hostname: broker\n"));
    ck_assert_ptr_nonnull (strstr (tap, "    container_name: parley-tap\n"));
    ck_assert_ptr_nonnull (strstr (llm, "    container_name: parley-llm\n"));
    ck_assert_ptr_nonnull (strstr (llm, "    hostname: llm\n"));

    //  Each program gets its own meaning of a shared name: the broker binds
    //  its tap, the tap connects through the broker; broker settings stay
    //  out of the agents' environment.
    ck_assert_ptr_nonnull (strstr (broker, "      PARLEY_TAP: tcp://*:5557\n"));
    ck_assert_ptr_nonnull (strstr (broker, "      PARLEY_ADVERTISE_HOST: broker\n"));
    ck_assert_ptr_null (strstr (tap, "PARLEY_TAP:"));
    ck_assert_ptr_nonnull (strstr (tap, "      PARLEY_BROKER: tcp://broker:5555\n"));
    ck_assert_ptr_nonnull (strstr (tap, "      PARLEY_CURVE_KEY: /var/lib/parley-tapkeys/tap\n"));
    ck_assert_ptr_null (strstr (agent, "PARLEY_ROUTER"));
    ck_assert_ptr_null (strstr (agent, "PARLEY_DATA_DIR"));
    ck_assert_ptr_null (strstr (broker, "PARLEY_BROKER"));
    free (tap);
    free (llm_pull);
    free (llm);
    free (broker);
    free (agent);
    free (r.output);

    //  One env file per service, named in the compose file.
    char path [TESTOPS_DIR_MAX + 64];
    snprintf (path, sizeof path, "%s/docker-compose.yml", testops_root ());
    char *compose = testsuite_read_file (path, NULL);
    static const char *services [] = { "broker", "agent", "tap" };
    for (size_t i = 0; i < 3; i++) {
        char line [128];
        snprintf (line, sizeof line, "    env_file: [compose/%s.env]\n", services [i]);
        ck_assert_msg (strstr (compose, line), "docker-compose.yml lacks %s", line);
        snprintf (path, sizeof path, "%s/compose/%s.env", testops_root (), services [i]);
        ck_assert_int_eq (access (path, R_OK), 0);
    }
    free (compose);
}
END_TEST

//  The port check must be able to fail: every form of a published port
//  that is not bound to loopback is caught.
START_TEST (test_compose_ports_checked)
{
    testops_setup ();
    testops_require_tool ("docker-compose", "docker-compose");
    static const char *ports [] = { "\"5555:5555\"", "\"0.0.0.0:5555:5555\"", "\"5555\"",
                                    "\"10.0.0.1:5555:5555\"" };
    tproc_dir_t *work_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (work_dir);
    char file [PATH_MAX];
    snprintf (file, sizeof file, "%s/docker-compose.yml", tproc_dir_name (work_dir));
    for (size_t i = 0; i < sizeof ports / sizeof ports [0]; i++) {
        char text [512];
        snprintf (text, sizeof text, "services:\n  a:\n    image: x\n    ports:\n"
                  "      - \"127.0.0.1:1:1\"\n      - %s\n", ports [i]);
        ck_assert (tproc_write_file (file, text));
        testops_result_t r = s_compose (file, NULL, NULL);
        ck_assert_msg (r.status == 0, "%s", r.output);
        char *beyond = s_port_beyond_loopback (r.output);
        ck_assert_msg (beyond, "%s not caught in:\n%s", ports [i], r.output);
        free (beyond);
        free (r.output);
    }
    tproc_dir_destroy (&work_dir);
}
END_TEST

//  The compose check must be able to fail.
START_TEST (test_compose_catches_mistakes)
{
    testops_setup ();
    testops_require_tool ("docker-compose", "docker-compose");
    char file [PATH_MAX];
    tproc_dir_t *work_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (work_dir);
    const char *work = tproc_dir_name (work_dir);
    snprintf (file, sizeof file, "%s/docker-compose.yml", work);
    ck_assert (tproc_write_file (file, "services:\n  broker:\n    image: parley\n    restart: sometimes\n"
                        "    ports: 5555\n"));
    testops_result_t r = s_compose (file, NULL, "-q");
    ck_assert_msg (r.status != 0, "a broken compose file passed:\n%s", r.output);
    free (r.output);
    tproc_dir_destroy (&work_dir);
}
END_TEST

//  Every COPY source in the Dockerfile exists (a renamed script would
//  otherwise only show up in someone's docker build), and it builds from
//  Debian 12 with scripts/deps.sh.
START_TEST (test_dockerfile)
{
    testops_setup ();
    char path [TESTOPS_DIR_MAX + 300];
    snprintf (path, sizeof path, "%s/Dockerfile", testops_root ());
    char *text = testsuite_read_file (path, NULL);
    ck_assert_ptr_nonnull (strstr (text, "\nFROM debian:bookworm AS build\n"));
    ck_assert_ptr_nonnull (strstr (text, "\nRUN ./scripts/deps.sh\n"));
    int copies = 0;
    for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n")) {
        if (strncmp (line, "COPY ", 5) != 0 || strstr (line, "--from="))
            continue;
        char source [256];
        ck_assert_int_eq (sscanf (line + 5, "%255s", source), 1);
        snprintf (path, sizeof path, "%s/%s", testops_root (), source);
        ck_assert_msg (access (path, R_OK) == 0, "Dockerfile copies missing %s", source);
        copies++;
    }
    ck_assert_int_ge (copies, 3);
    free (text);
}
END_TEST

//  The image's runtime stage installs what this script prints for the
//  built binaries: it must name the packages of the libraries they load.
START_TEST (test_runtime_packages)
{
    testops_setup ();
    testops_require_tool ("dpkg", "dpkg");
    char script [TESTOPS_DIR_MAX + 64], broker [TESTOPS_DIR_MAX + 64], agent [TESTOPS_DIR_MAX + 64];
    snprintf (script, sizeof script, "%s/scripts/runtime-packages.sh", testops_root ());
    snprintf (broker, sizeof broker, "%s/parley-broker", testops_bin ());
    snprintf (agent, sizeof agent, "%s/parley-agent", testops_bin ());
    char *argv [] = { script, broker, agent, NULL };
    testops_result_t r = testops_run (NULL, argv);
    ck_assert_msg (r.status == 0, "runtime-packages.sh failed:\n%s", r.output);
    ck_assert_ptr_nonnull (strstr (r.output, "libzmq5\n"));
    ck_assert_ptr_nonnull (strstr (r.output, "libczmq4\n"));
    ck_assert_ptr_nonnull (strstr (r.output, "libcurl4\n"));
    ck_assert_ptr_nonnull (strstr (r.output, "libc6\n"));
    free (r.output);
}
END_TEST

//  scripts/docker-agent.sh picks the agent's id and memory directory. The
//  parley-agent it execs here is a recorder printing its arguments: what
//  is under test is the script's choice of arguments.
START_TEST (test_docker_agent_script)
{
    testops_setup ();
    char path [PATH_MAX], script [TESTOPS_DIR_MAX + 64];
    tproc_dir_t *work_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (work_dir);
    const char *work = tproc_dir_name (work_dir);
    snprintf (path, sizeof path, "%s/parley-agent", work);
    ck_assert (tproc_write_file (path, "#!/bin/sh\necho \"args: $*\"\necho \"llm: ${PARLEY_LLM_URL:-none}\"\n"));
    ck_assert_int_eq (chmod (path, 0755), 0);
    snprintf (script, sizeof script, "%s/scripts/docker-agent.sh", testops_root ());

    char *old_path = strdup (getenv ("PATH"));
    char new_path [PATH_MAX * 2];
    snprintf (new_path, sizeof new_path, "%s:%s", work, old_path);
    setenv ("PATH", new_path, 1);
    char memory [PATH_MAX];
    snprintf (memory, sizeof memory, "%s/mem", work);
    setenv ("PARLEY_MEMORY_DIR", memory, 1);
    setenv ("HOSTNAME", "c0ffee123456", 1);
    unsetenv ("PARLEY_AGENT_ID");
    unsetenv ("PARLEY_LLM_URL");

    char *argv [] = { "sh", script, "--log-level", "debug", NULL };
    testops_result_t r = testops_run (NULL, argv);
    char expect [PATH_MAX + 128];
    snprintf (expect, sizeof expect, "args: --id c0ffee123456 --memory-dir %s --log-level debug\n",
              memory);
    ck_assert_msg (r.status == 0 && strstr (r.output, expect), "got:\n%s", r.output);
    //  No "llm" host here, so no model server is assumed.
    ck_assert_ptr_nonnull (strstr (r.output, "llm: none\n"));
    ck_assert_int_eq (access (memory, W_OK), 0);
    free (r.output);

    //  An explicit id and LLM URL win.
    setenv ("PARLEY_AGENT_ID", "Scout", 1);
    setenv ("PARLEY_LLM_URL", "http://models:8000/v1", 1);
    snprintf (memory, sizeof memory, "%s/Scout", work);
    setenv ("PARLEY_MEMORY_DIR", memory, 1);
    char *argv2 [] = { "sh", script, NULL };
    r = testops_run (NULL, argv2);
    snprintf (expect, sizeof expect, "args: --id Scout --memory-dir %s/Scout\n", work);
    ck_assert_msg (r.status == 0 && strstr (r.output, expect), "got:\n%s", r.output);
    ck_assert_ptr_nonnull (strstr (r.output, "llm: http://models:8000/v1\n"));
    free (r.output);

    setenv ("PATH", old_path, 1);
    free (old_path);
    tproc_dir_destroy (&work_dir);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("ops_docker");
    TCase *tc = tcase_create ("docker");
    tcase_add_test (tc, test_compose_config);
    tcase_add_test (tc, test_compose_catches_mistakes);
    tcase_add_test (tc, test_compose_operations);
    tcase_add_test (tc, test_compose_ports_checked);
    tcase_add_test (tc, test_dockerfile);
    tcase_add_test (tc, test_runtime_packages);
    tcase_add_test (tc, test_docker_agent_script);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}

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

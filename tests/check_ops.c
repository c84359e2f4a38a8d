// SPDX-License-Identifier: MIT
/*  check_ops - the systemd units and `make install` (the compose file,
    Dockerfile and container scripts are in check_ops_docker).

    Every check runs the real tool: `systemd-analyze verify` for the units
    (any line of output is a failure: it prints nothing for clean units),
    `make install` into a temporary DESTDIR (then the installed binaries
    run, their man pages name every flag, and `make uninstall` leaves no
    file behind). A missing tool is a failure,
    not a skip: scripts/deps.sh installs all of them, and a check that
    silently does nothing would hide a broken file.

    The units name /usr/local/bin/parley-*; verify warns about executables
    that do not exist, so each check copies the units into a temp dir with
    that path rewritten to a symlink to the directory under test. (The
    symlink keeps the rewritten path free of spaces whatever the checkout
    path is.)
*/
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/testops.h"
#include "lib/testsuite.h"
#include "lib/tproc.h"

//  --------------------------------------------------------------------------
//  Helpers

//  Copies `text` with every `from` replaced by `to` (caller frees).
static char *
s_replace (const char *text, const char *from, const char *to)
{
    char *out = NULL;
    size_t size = 0;
    FILE *mem = open_memstream (&out, &size);
    const char *hit;
    while ((hit = strstr (text, from))) {
        fwrite (text, 1, (size_t) (hit - text), mem);
        fputs (to, mem);
        text = hit + strlen (from);
    }
    fputs (text, mem);
    fclose (mem);
    return out;
}

static const char *s_units [] = {
    "parley-broker.service", "parley-agent@.service", "parley.target", "parley-keys.service"
};
#define UNIT_COUNT (sizeof s_units / sizeof s_units [0])

//  Copies the units from `unit_dir` into `work` with `bin_path` (as they
//  name it) pointing at `real_bin`, and runs systemd-analyze verify on them
//  and on one agent instance. Returns the tool's result.
static testops_result_t
s_verify_units (const char *unit_dir, const char *bin_path, const char *real_bin,
                const char *work, const char *const *extra, size_t extra_count)
{
    char link [PATH_MAX], path [PATH_MAX];
    snprintf (link, sizeof link, "%s/bin", work);
    ck_assert_int_eq (symlink (real_bin, link), 0);
    char *argv [16] = { "systemd-analyze", "verify" };
    int argc = 2;
    static char paths [16][PATH_MAX];
    for (size_t i = 0; i < UNIT_COUNT + extra_count; i++) {
        const char *name = i < UNIT_COUNT ? s_units [i] : extra [i - UNIT_COUNT];
        snprintf (path, sizeof path, "%s/%s", unit_dir, name);
        char *text = testsuite_read_file (path, NULL);
        char *fixed = s_replace (text, bin_path, link);
        snprintf (paths [argc], PATH_MAX, "%s/%s", work, name);
        ck_assert (tproc_write_file (paths [argc], fixed));
        argv [argc] = paths [argc];
        argc++;
        free (text);
        free (fixed);
    }
    //  The template alone is checked without %i; an instance expands it.
    snprintf (paths [argc], PATH_MAX, "%s/parley-agent@Agent1.service", work);
    argv [argc] = paths [argc];
    argc++;
    argv [argc] = NULL;
    return testops_run (work, argv);
}

//  --------------------------------------------------------------------------
//  systemd

START_TEST (test_units_verify)
{
    testops_setup ();
    testops_require_tool ("systemd-analyze", "systemd");
    char unit_dir [TESTOPS_DIR_MAX + 16];
    tproc_dir_t *work_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (work_dir);
    const char *work = tproc_dir_name (work_dir);
    snprintf (unit_dir, sizeof unit_dir, "%s/systemd", testops_root ());
    testops_result_t r = s_verify_units (unit_dir, "/usr/local/bin", testops_bin (), work, NULL, 0);
    ck_assert_msg (r.status == 0 && r.output [0] == 0,
                   "systemd-analyze verify (exit %d) said:\n%s", r.status, r.output);
    free (r.output);
    tproc_dir_destroy (&work_dir);
}
END_TEST

//  The verify step above must be able to fail: a unit with a typo and one
//  whose binary is missing both produce output.
START_TEST (test_units_verify_catches_mistakes)
{
    testops_setup ();
    testops_require_tool ("systemd-analyze", "systemd");
    char units [TESTOPS_DIR_MAX], path [PATH_MAX];
    tproc_dir_t *work_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (work_dir);
    const char *work = tproc_dir_name (work_dir);
    snprintf (units, sizeof units, "%s/units", work);
    ck_assert_int_eq (mkdir (units, 0755), 0);
    for (size_t i = 0; i < UNIT_COUNT; i++) {
        char source [TESTOPS_DIR_MAX + 64];
        snprintf (source, sizeof source, "%s/systemd/%s", testops_root (), s_units [i]);
        char *text = testsuite_read_file (source, NULL);
        snprintf (path, sizeof path, "%s/%s", units, s_units [i]);
        ck_assert (tproc_write_file (path, text));
        free (text);
    }
    snprintf (path, sizeof path, "%s/parley-typo.service", units);
    ck_assert (tproc_write_file (path, "[Unit]\nDescription=typo\n[Service]\nExecStart=/bin/true\nRestrat=always\n"));
    const char *extra [] = { "parley-typo.service" };
    testops_result_t r = s_verify_units (units, "/usr/local/bin", "/nonexistent", work, extra, 1);
    ck_assert_msg (strstr (r.output, "Restrat"), "typo not reported:\n%s", r.output);
    ck_assert_msg (strstr (r.output, "/parley-broker"), "missing binary not reported:\n%s", r.output);
    free (r.output);
    tproc_dir_destroy (&work_dir);
}
END_TEST

//  The hardening of the units, as `systemd-analyze security` rates it
//  (0 safest .. 10), must not get worse: the broker 1.4, an agent 1.5.
//  --threshold takes tenths and fails above them; one tenth less must
//  fail, so the check is known to measure something.
START_TEST (test_units_security)
{
    testops_setup ();
    testops_require_tool ("systemd-analyze", "systemd");
    static const struct {
        const char *unit;
        int tenths;
    } units [] = { { "parley-broker.service", 14 }, { "parley-agent@.service", 15 } };
    for (size_t i = 0; i < sizeof units / sizeof units [0]; i++) {
        char path [TESTOPS_DIR_MAX + 64], ok [32], tight [32];
        snprintf (path, sizeof path, "%s/systemd/%s", testops_root (), units [i].unit);
        snprintf (ok, sizeof ok, "--threshold=%d", units [i].tenths);
        snprintf (tight, sizeof tight, "--threshold=%d", units [i].tenths - 1);
        char *argv [] = { "systemd-analyze", "security", "--offline=true", ok, path, NULL };
        testops_result_t r = testops_run (NULL, argv);
        ck_assert_msg (r.status == 0, "%s rates worse than %d tenths:\n%s", units [i].unit,
                       units [i].tenths, r.output);
        free (r.output);
        argv [3] = tight;
        r = testops_run (NULL, argv);
        ck_assert_msg (r.status != 0, "%s rates better than %d tenths: tighten the check",
                       units [i].unit, units [i].tenths);
        free (r.output);
    }
}
END_TEST

//  What the units must contain, line by line.
START_TEST (test_units_content)
{
    testops_setup ();
    static const struct {
        const char *unit, *line;
    } wanted [] = {
        { "parley-broker.service", "ExecStart=/usr/local/bin/parley-broker --curve-keys "
                                   "${CREDENTIALS_DIRECTORY} --curve-allow /etc/parley/keys/allow" },
        { "parley-agent@.service", "ExecStart=/usr/local/bin/parley-agent --id %i "
                                   "--memory-dir ${STATE_DIRECTORY} --curve-key "
                                   "${CREDENTIALS_DIRECTORY}/team --curve-server-key "
                                   "${CREDENTIALS_DIRECTORY}/broker" },
        { "parley-broker.service", "Requires=parley-keys.service" },
        { "parley-agent@.service", "Requires=parley-keys.service" },
        { "parley-keys.service", "Type=oneshot" },
        { "parley-agent@.service", "StateDirectory=parley/%i" },
        { "parley-broker.service", "StateDirectory=parley/broker" },
        { "parley-broker.service", "LimitNOFILE=65536" },
        { "parley-agent@.service", "LimitNOFILE=4096" },
        //  Readiness and liveness come from the programs (sd_notify).
        { "parley-broker.service", "WatchdogSec=30s" },
        { "parley-broker.service", "LoadCredential=broker:/etc/parley/keys/private/broker" },
        { "parley.target", "Wants=parley-keys.service parley-broker.service" },
        { "parley.target", "WantedBy=multi-user.target" },
    };
    static const char *both [] = {
        "EnvironmentFile=-/etc/parley/parley.env", "Restart=on-failure", "DynamicUser=yes",
        "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "PartOf=parley.target",
        "WantedBy=parley.target", "CapabilityBoundingSet=", "Type=notify", "NotifyAccess=main",
    };
    char path [TESTOPS_DIR_MAX + 64], line [512];
    for (size_t i = 0; i < sizeof wanted / sizeof wanted [0]; i++) {
        snprintf (path, sizeof path, "%s/systemd/%s", testops_root (), wanted [i].unit);
        char *text = testsuite_read_file (path, NULL);
        snprintf (line, sizeof line, "\n%s\n", wanted [i].line);
        ck_assert_msg (strstr (text, line), "%s lacks the line '%s'", wanted [i].unit, wanted [i].line);
        free (text);
    }
    for (size_t u = 0; u < 2; u++) {
        snprintf (path, sizeof path, "%s/systemd/%s", testops_root (), s_units [u]);
        char *text = testsuite_read_file (path, NULL);
        for (size_t i = 0; i < sizeof both / sizeof both [0]; i++) {
            snprintf (line, sizeof line, "\n%s\n", both [i]);
            ck_assert_msg (strstr (text, line), "%s lacks the line '%s'", s_units [u], both [i]);
        }
        free (text);
    }
    snprintf (path, sizeof path, "%s/systemd/parley.env", testops_root ());
    char *env = testsuite_read_file (path, NULL);
    static const char *vars [] = {
        "\nPARLEY_BROKER=tcp://127.0.0.1:5555\n", "\nPARLEY_LLM_URL=", "\nPARLEY_LLM_MODEL=",
        "\nPARLEY_EMBED_URL=", "\nPARLEY_EMBED_MODEL=", "\n#PARLEY_LLM_API_KEY=",
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars [0]; i++)
        ck_assert_msg (strstr (env, vars [i]), "parley.env lacks %s", vars [i] + 1);
    free (env);
}
END_TEST

//  --------------------------------------------------------------------------
//  make install

static void
s_assert_mode (const char *root, const char *path, mode_t mode)
{
    char full [PATH_MAX];
    snprintf (full, sizeof full, "%s%s", root, path);
    struct stat st;
    ck_assert_msg (stat (full, &st) == 0, "make install did not create %s", path);
    ck_assert_msg ((st.st_mode & 07777) == mode, "%s has mode %o, not %o",
                   path, st.st_mode & 07777, mode);
}

//  Installs with the same SANITIZE as the binaries under test, so make
//  finds them built and only copies; -o all keeps it from touching bin/.
static testops_result_t
s_make_install (const char *prefix, const char *destdir)
{
    char prefix_arg [PATH_MAX], destdir_arg [PATH_MAX];
    snprintf (prefix_arg, sizeof prefix_arg, "PREFIX=%s", prefix);
    snprintf (destdir_arg, sizeof destdir_arg, "DESTDIR=%s", destdir);
    char *sanitize = strstr (testops_bin (), "/build/san/") ? "SANITIZE=1" : "SANITIZE=0";
    char *argv [] = { "make", "--no-print-directory", "-s", "-o", "all", "install",
                      prefix_arg, destdir_arg, sanitize, NULL };
    return testops_run (testops_root (), argv);
}

START_TEST (test_make_install)
{
    testops_setup ();
    testops_require_tool ("make", "make");
    testops_require_tool ("systemd-analyze", "systemd");
    tproc_dir_t *dest_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (dest_dir);
    const char *dest = tproc_dir_name (dest_dir);
    testops_result_t r = s_make_install ("/usr/local", dest);
    ck_assert_msg (r.status == 0, "make install failed:\n%s", r.output);
    free (r.output);

    s_assert_mode (dest, "/usr/local/bin/parley-broker", 0755);
    s_assert_mode (dest, "/usr/local/bin/parley-agent", 0755);
    s_assert_mode (dest, "/usr/local/bin/parley-tap", 0755);
    for (size_t i = 0; i < UNIT_COUNT; i++) {
        char path [PATH_MAX];
        snprintf (path, sizeof path, "/usr/local/lib/systemd/system/%s", s_units [i]);
        s_assert_mode (dest, path, 0644);
    }
    //  The key file may hold API keys: not world-readable.
    s_assert_mode (dest, "/etc/parley/parley.env", 0640);
    s_assert_mode (dest, "/usr/local/share/doc/parley/README.md", 0644);
    s_assert_mode (dest, "/usr/local/share/doc/parley/PROTOCOL.md", 0644);

    //  The installed units verify against the installed binaries.
    char unit_dir [PATH_MAX], bin_dir [PATH_MAX];
    tproc_dir_t *work_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (work_dir);
    const char *work = tproc_dir_name (work_dir);
    snprintf (unit_dir, sizeof unit_dir, "%s/usr/local/lib/systemd/system", dest);
    snprintf (bin_dir, sizeof bin_dir, "%s/usr/local/bin", dest);
    r = s_verify_units (unit_dir, "/usr/local/bin", bin_dir, work, NULL, 0);
    ck_assert_msg (r.status == 0 && r.output [0] == 0,
                   "installed units do not verify (exit %d):\n%s", r.status, r.output);
    free (r.output);
    tproc_dir_destroy (&work_dir);

    //  A second install keeps an edited parley.env.
    char env [PATH_MAX];
    snprintf (env, sizeof env, "%s/etc/parley/parley.env", dest);
    ck_assert (tproc_write_file (env, "PARLEY_BROKER=tcp://edited:5555\n"));
    r = s_make_install ("/usr/local", dest);
    ck_assert_msg (r.status == 0, "second make install failed:\n%s", r.output);
    free (r.output);
    char *text = testsuite_read_file (env, NULL);
    ck_assert_str_eq (text, "PARLEY_BROKER=tcp://edited:5555\n");
    free (text);
    tproc_dir_destroy (&dest_dir);

    //  Another PREFIX: the units point at it.
    dest_dir = tproc_dir_new ();
    ck_assert_ptr_nonnull (dest_dir);
    dest = tproc_dir_name (dest_dir);
    r = s_make_install ("/opt/parley", dest);
    ck_assert_msg (r.status == 0, "make install PREFIX=/opt/parley failed:\n%s", r.output);
    free (r.output);
    char unit [PATH_MAX];
    snprintf (unit, sizeof unit, "%s/opt/parley/lib/systemd/system/parley-agent@.service", dest);
    text = testsuite_read_file (unit, NULL);
    ck_assert_ptr_nonnull (strstr (text, "\nExecStart=/opt/parley/bin/parley-agent "));
    ck_assert_ptr_null (strstr (text, "/usr/local"));
    free (text);
    tproc_dir_destroy (&dest_dir);
}
END_TEST

//  Installs with these extra make variables (NULL-terminated).
static testops_result_t
s_make (const char *target, const char *destdir, const char *const *vars)
{
    char destdir_arg [PATH_MAX];
    snprintf (destdir_arg, sizeof destdir_arg, "DESTDIR=%s", destdir);
    char *sanitize = strstr (testops_bin (), "/build/san/") ? "SANITIZE=1" : "SANITIZE=0";
    char *argv [16] = { "make", "--no-print-directory", "-s", "-o", "all", (char *) target,
                        destdir_arg, sanitize };
    size_t n = 8;
    for (size_t i = 0; vars && vars [i] && n < 15; i++)
        argv [n++] = (char *) vars [i];
    argv [n] = NULL;
    return testops_run (testops_root (), argv);
}

//  Every file and symlink under `root`, one per line (caller frees).
static char *
s_files (const char *root)
{
    char command [PATH_MAX + 64];
    snprintf (command, sizeof command, "cd '%s' && find . -not -type d | sort", root);
    FILE *pipe = popen (command, "r");
    ck_assert_ptr_nonnull (pipe);
    char *out = NULL;
    size_t size = 0;
    FILE *mem = open_memstream (&out, &size);
    char line [PATH_MAX];
    while (fgets (line, sizeof line, pipe))
        fputs (line, mem);
    fclose (mem);
    ck_assert_int_eq (pclose (pipe), 0);
    return out;
}

//  The installed binary runs (--help, exit 0) and its man page names every
//  long flag its --help lists.
static void
s_check_binary (const char *bin_dir, const char *man_dir, const char *name)
{
    char path [PATH_MAX + 300], page [PATH_MAX + 300];
    snprintf (path, sizeof path, "%s/%s", bin_dir, name);
    snprintf (page, sizeof page, "%s/%s.1", man_dir, name);
    const char *argv [] = { path, "--help", NULL };
    tproc_t *proc = tproc_run (argv, false);
    ck_assert_msg (tproc_status (proc) == 0, "installed %s --help: exit %d\n%s", name,
                   tproc_status (proc), tproc_err (proc));
    char *man = testsuite_read_file (page, NULL);
    ck_assert_msg (man, "no man page %s", page);
    ck_assert_msg (strstr (man, ".SH OPTIONS"), "%s has no OPTIONS section", page);
    size_t flags = 0;
    for (const char *at = tproc_out (proc); (at = strstr (at, "--")); ) {
        at += 2;
        size_t len = strspn (at, "abcdefghijklmnopqrstuvwxyz0123456789-");
        if (len == 0)
            continue;
        //  help2man writes --flag as \-\-flag, - as \-.
        char want [128] = "\\-\\-";
        size_t w = strlen (want);
        for (size_t i = 0; i < len && w + 3 < sizeof want; i++) {
            if (at [i] == '-')
                want [w++] = '\\';
            want [w++] = at [i];
        }
        want [w] = 0;
        ck_assert_msg (strstr (man, want), "%s does not mention %s", page, want);
        flags++;
    }
    ck_assert_uint_gt (flags, 3);
    free (man);
    tproc_destroy (&proc);
}

START_TEST (test_install_uninstall)
{
    testops_setup ();
    testops_require_tool ("make", "make");
    testops_require_tool ("help2man", "help2man");
    tproc_dir_t *dest_dir = tproc_dir_new ();
    const char *dest = tproc_dir_name (dest_dir);
    testops_result_t r = s_make ("install", dest, NULL);
    ck_assert_msg (r.status == 0, "make install failed:\n%s", r.output);
    free (r.output);
    //  Every binary the build made is installed, runs, and has its page.
    char bin_dir [PATH_MAX], man_dir [PATH_MAX];
    snprintf (bin_dir, sizeof bin_dir, "%s/usr/local/bin", dest);
    snprintf (man_dir, sizeof man_dir, "%s/usr/local/share/man/man1", dest);
    DIR *dir = opendir (testops_bin ());
    ck_assert_ptr_nonnull (dir);
    size_t binaries = 0;
    struct dirent *entry;
    while ((entry = readdir (dir)))
        if (strncmp (entry->d_name, "parley-", 7) == 0) {
            s_check_binary (bin_dir, man_dir, entry->d_name);
            binaries++;
        }
    closedir (dir);
    ck_assert_uint_ge (binaries, 5);
    s_assert_mode (dest, "/usr/local/share/doc/parley/LICENSE", 0644);
    s_assert_mode (dest, "/usr/local/include/parley/client.h", 0644);
    s_assert_mode (dest, "/etc/parley/parley.env", 0640);

    //  Uninstalled: not one file or link left, and Parley's own folders gone.
    r = s_make ("uninstall", dest, NULL);
    ck_assert_msg (r.status == 0, "make uninstall failed:\n%s", r.output);
    free (r.output);
    char *left = s_files (dest);
    ck_assert_msg (left [0] == 0, "make uninstall left:\n%s", left);
    free (left);
    struct stat st;
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/usr/local/share/doc/parley", dest);
    ck_assert_int_ne (stat (path, &st), 0);
    snprintf (path, sizeof path, "%s/etc/parley", dest);
    ck_assert_int_ne (stat (path, &st), 0);
    tproc_dir_destroy (&dest_dir);

    //  Another PREFIX and an explicit SYSCONFDIR; an edited parley.env
    //  survives uninstall (it is the operator's), nothing else does.
    dest_dir = tproc_dir_new ();
    dest = tproc_dir_name (dest_dir);
    const char *vars [] = { "PREFIX=/opt/parley", NULL };
    r = s_make ("install", dest, vars);
    ck_assert_msg (r.status == 0, "make install PREFIX=/opt/parley failed:\n%s", r.output);
    free (r.output);
    s_assert_mode (dest, "/opt/parley/etc/parley/parley.env", 0640);
    s_assert_mode (dest, "/opt/parley/share/man/man1/parley-ctl.1", 0644);
    snprintf (path, sizeof path, "%s/opt/parley/lib/systemd/system/parley-broker.service", dest);
    char *unit = testsuite_read_file (path, NULL);
    ck_assert_msg (strstr (unit, "/opt/parley/etc/parley/parley.env"), "%s", unit);
    free (unit);
    r = s_make ("uninstall", dest, vars);
    ck_assert_msg (r.status == 0, "make uninstall PREFIX=/opt/parley failed:\n%s", r.output);
    free (r.output);
    left = s_files (dest);
    ck_assert_msg (left [0] == 0, "make uninstall left:\n%s", left);
    free (left);
    const char *etc_vars [] = { "PREFIX=/usr", "SYSCONFDIR=/srv/conf", NULL };
    r = s_make ("install", dest, etc_vars);
    ck_assert_msg (r.status == 0, "make install SYSCONFDIR=/srv/conf failed:\n%s", r.output);
    free (r.output);
    snprintf (path, sizeof path, "%s/srv/conf/parley/parley.env", dest);
    ck_assert (tproc_write_file (path, "PARLEY_BROKER=tcp://edited:5555\n"));
    r = s_make ("uninstall", dest, etc_vars);
    ck_assert_msg (r.status == 0 && strstr (r.output, "was edited: kept"),
                   "make uninstall SYSCONFDIR=/srv/conf:\n%s", r.output);
    free (r.output);
    left = s_files (dest);
    ck_assert_str_eq (left, "./srv/conf/parley/parley.env\n");
    free (left);
    tproc_dir_destroy (&dest_dir);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *suite = suite_create ("ops");
    TCase *tc = tcase_create ("systemd");
    tcase_add_test (tc, test_units_verify);
    tcase_add_test (tc, test_units_verify_catches_mistakes);
    tcase_add_test (tc, test_units_content);
    tcase_add_test (tc, test_units_security);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("install");
    tcase_add_test (tc, test_make_install);
    tcase_add_test (tc, test_install_uninstall);
    suite_add_tcase (suite, tc);
    return suite;
}

int
main (void)
{
    return testsuite_run (s_suite ());
}

/*  check_ops - the operations files: systemd units, docker-compose.yml,
    Dockerfile, `make install`, and the scripts the image relies on.

    Every check runs the real tool: `systemd-analyze verify` for the units
    (any line of output is a failure: it prints nothing for clean units),
    Debian's `docker-compose config -q` for the compose file (needs no
    engine), `make install` into a temporary DESTDIR. A missing tool is a
    failure, not a skip: scripts/deps.sh installs all of them, and a check
    that silently does nothing would hide a broken file.

    The units name /usr/local/bin/parley-*; verify warns about executables
    that do not exist, so each check copies the units into a temp dir with
    that path rewritten to a symlink to the directory under test. (The
    symlink keeps the rewritten path free of spaces whatever the checkout
    path is.)
*/
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/testsuite.h"

//  --------------------------------------------------------------------------
//  Helpers

//  Directories are kept shorter than PATH_MAX so a directory plus a file
//  name always fits a PATH_MAX buffer.
#define DIR_MAX 1024

static char s_root [DIR_MAX];       //  the repository (PARLEY_TEST_DIR/..)
static char s_bin [DIR_MAX];        //  the binaries under test

static void
s_setup (void)
{
    const char *test_dir = getenv ("PARLEY_TEST_DIR");
    const char *bin_dir = getenv ("PARLEY_BIN_DIR");
    ck_assert_msg (test_dir && bin_dir, "run with PARLEY_TEST_DIR and PARLEY_BIN_DIR (make test)");
    char joined [PATH_MAX];
    snprintf (joined, sizeof joined, "%s/..", test_dir);
    char *root = realpath (joined, NULL);
    char *bin = realpath (bin_dir, NULL);
    ck_assert_msg (root && strlen (root) < DIR_MAX, "PARLEY_TEST_DIR %s: unusable", test_dir);
    ck_assert_msg (bin && strlen (bin) < DIR_MAX, "PARLEY_BIN_DIR %s: %s", bin_dir,
                   bin ? "too long" : strerror (errno));
    snprintf (s_root, sizeof s_root, "%s", root);
    snprintf (s_bin, sizeof s_bin, "%s", bin);
    free (root);
    free (bin);
}

typedef struct {
    int status;         //  exit code, or 128 + signal, or 127 if not run
    char *output;       //  stdout and stderr together (caller frees)
} result_t;

//  Runs argv (NULL-terminated) in `cwd`, capturing stdout and stderr.
static result_t
s_run (const char *cwd, char *const argv [])
{
    int fds [2];
    ck_assert_int_eq (pipe (fds), 0);
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        dup2 (fds [1], 1);
        dup2 (fds [1], 2);
        close (fds [0]);
        close (fds [1]);
        //  A nested make must not join `make test`'s jobserver.
        unsetenv ("MAKEFLAGS");
        unsetenv ("MFLAGS");
        unsetenv ("MAKELEVEL");
        if (cwd && chdir (cwd) != 0)
            _exit (126);
        execvp (argv [0], argv);
        fprintf (stderr, "cannot run %s: %s\n", argv [0], strerror (errno));
        _exit (127);
    }
    close (fds [1]);
    result_t result = { 0 };
    size_t size = 0, cap = 4096;
    result.output = malloc (cap);
    ck_assert_ptr_nonnull (result.output);
    ssize_t n;
    while ((n = read (fds [0], result.output + size, cap - size - 1)) > 0) {
        size += (size_t) n;
        if (cap - size < 2) {
            cap *= 2;
            result.output = realloc (result.output, cap);
            ck_assert_ptr_nonnull (result.output);
        }
    }
    result.output [size] = 0;
    close (fds [0]);
    int status;
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    result.status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
    return result;
}

//  The tool must be there: deps.sh installs it, CI runs this.
static void
s_require_tool (const char *tool, const char *package)
{
    char *argv [] = { "sh", "-c", "command -v \"$0\"", (char *) tool, NULL };
    result_t r = s_run (NULL, argv);
    ck_assert_msg (r.status == 0, "%s is missing: install Debian's %s (scripts/deps.sh does)",
                   tool, package);
    free (r.output);
}

static char *
s_read_file (const char *path)
{
    FILE *file = fopen (path, "r");
    ck_assert_msg (file != NULL, "cannot read %s: %s", path, strerror (errno));
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream (&text, &size);
    char buf [4096];
    size_t n;
    while ((n = fread (buf, 1, sizeof buf, file)) > 0)
        fwrite (buf, 1, n, mem);
    fclose (file);
    fclose (mem);
    return text;
}

static void
s_write_file (const char *path, const char *text)
{
    FILE *file = fopen (path, "w");
    ck_assert_msg (file != NULL, "cannot write %s: %s", path, strerror (errno));
    fputs (text, file);
    fclose (file);
}

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

static void
s_mkdtemp (char *path, size_t size)
{
    snprintf (path, size, "/tmp/check_ops.XXXXXX");
    ck_assert_ptr_nonnull (mkdtemp (path));
}

static void
s_rm_rf (const char *path)
{
    char *argv [] = { "rm", "-rf", (char *) path, NULL };
    result_t r = s_run (NULL, argv);
    free (r.output);
}

static const char *s_units [] = {
    "parley-broker.service", "parley-agent@.service", "parley.target"
};
#define UNIT_COUNT (sizeof s_units / sizeof s_units [0])

//  Copies the units from `unit_dir` into `work` with `bin_path` (as they
//  name it) pointing at `real_bin`, and runs systemd-analyze verify on them
//  and on one agent instance. Returns the tool's result.
static result_t
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
        char *text = s_read_file (path);
        char *fixed = s_replace (text, bin_path, link);
        snprintf (paths [argc], PATH_MAX, "%s/%s", work, name);
        s_write_file (paths [argc], fixed);
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
    return s_run (work, argv);
}

//  --------------------------------------------------------------------------
//  systemd

START_TEST (test_units_verify)
{
    s_setup ();
    s_require_tool ("systemd-analyze", "systemd");
    char work [64], unit_dir [DIR_MAX + 16];
    s_mkdtemp (work, sizeof work);
    snprintf (unit_dir, sizeof unit_dir, "%s/systemd", s_root);
    result_t r = s_verify_units (unit_dir, "/usr/local/bin", s_bin, work, NULL, 0);
    ck_assert_msg (r.status == 0 && r.output [0] == 0,
                   "systemd-analyze verify (exit %d) said:\n%s", r.status, r.output);
    free (r.output);
    s_rm_rf (work);
}
END_TEST

//  The verify step above must be able to fail: a unit with a typo and one
//  whose binary is missing both produce output.
START_TEST (test_units_verify_catches_mistakes)
{
    s_setup ();
    s_require_tool ("systemd-analyze", "systemd");
    char work [64], units [128], path [PATH_MAX];
    s_mkdtemp (work, sizeof work);
    snprintf (units, sizeof units, "%s/units", work);
    ck_assert_int_eq (mkdir (units, 0755), 0);
    for (size_t i = 0; i < UNIT_COUNT; i++) {
        char source [DIR_MAX + 64];
        snprintf (source, sizeof source, "%s/systemd/%s", s_root, s_units [i]);
        char *text = s_read_file (source);
        snprintf (path, sizeof path, "%s/%s", units, s_units [i]);
        s_write_file (path, text);
        free (text);
    }
    snprintf (path, sizeof path, "%s/parley-typo.service", units);
    s_write_file (path, "[Unit]\nDescription=typo\n[Service]\nExecStart=/bin/true\nRestrat=always\n");
    const char *extra [] = { "parley-typo.service" };
    result_t r = s_verify_units (units, "/usr/local/bin", "/nonexistent", work, extra, 1);
    ck_assert_msg (strstr (r.output, "Restrat"), "typo not reported:\n%s", r.output);
    ck_assert_msg (strstr (r.output, "/parley-broker"), "missing binary not reported:\n%s", r.output);
    free (r.output);
    s_rm_rf (work);
}
END_TEST

//  What issue 5 asks of the units, line by line.
START_TEST (test_units_content)
{
    s_setup ();
    static const struct {
        const char *unit, *line;
    } wanted [] = {
        { "parley-broker.service", "ExecStart=/usr/local/bin/parley-broker" },
        { "parley-agent@.service", "ExecStart=/usr/local/bin/parley-agent --id %i "
                                   "--memory-dir ${STATE_DIRECTORY}" },
        { "parley-agent@.service", "StateDirectory=parley/%i" },
        { "parley.target", "Wants=parley-broker.service" },
        { "parley.target", "WantedBy=multi-user.target" },
    };
    static const char *both [] = {
        "EnvironmentFile=-/etc/parley/parley.env", "Restart=on-failure", "DynamicUser=yes",
        "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "PartOf=parley.target",
        "WantedBy=parley.target", "CapabilityBoundingSet=",
    };
    char path [DIR_MAX + 64], line [512];
    for (size_t i = 0; i < sizeof wanted / sizeof wanted [0]; i++) {
        snprintf (path, sizeof path, "%s/systemd/%s", s_root, wanted [i].unit);
        char *text = s_read_file (path);
        snprintf (line, sizeof line, "\n%s\n", wanted [i].line);
        ck_assert_msg (strstr (text, line), "%s lacks the line '%s'", wanted [i].unit, wanted [i].line);
        free (text);
    }
    for (size_t u = 0; u < 2; u++) {
        snprintf (path, sizeof path, "%s/systemd/%s", s_root, s_units [u]);
        char *text = s_read_file (path);
        for (size_t i = 0; i < sizeof both / sizeof both [0]; i++) {
            snprintf (line, sizeof line, "\n%s\n", both [i]);
            ck_assert_msg (strstr (text, line), "%s lacks the line '%s'", s_units [u], both [i]);
        }
        free (text);
    }
    snprintf (path, sizeof path, "%s/systemd/parley.env", s_root);
    char *env = s_read_file (path);
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
static result_t
s_make_install (const char *prefix, const char *destdir)
{
    char prefix_arg [PATH_MAX], destdir_arg [PATH_MAX];
    snprintf (prefix_arg, sizeof prefix_arg, "PREFIX=%s", prefix);
    snprintf (destdir_arg, sizeof destdir_arg, "DESTDIR=%s", destdir);
    char *sanitize = strstr (s_bin, "/build/san/") ? "SANITIZE=1" : "SANITIZE=0";
    char *argv [] = { "make", "--no-print-directory", "-s", "-o", "all", "install",
                      prefix_arg, destdir_arg, sanitize, NULL };
    return s_run (s_root, argv);
}

START_TEST (test_make_install)
{
    s_setup ();
    s_require_tool ("make", "make");
    s_require_tool ("systemd-analyze", "systemd");
    char dest [64];
    s_mkdtemp (dest, sizeof dest);
    result_t r = s_make_install ("/usr/local", dest);
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
    char work [64], unit_dir [128], bin_dir [128];
    s_mkdtemp (work, sizeof work);
    snprintf (unit_dir, sizeof unit_dir, "%s/usr/local/lib/systemd/system", dest);
    snprintf (bin_dir, sizeof bin_dir, "%s/usr/local/bin", dest);
    r = s_verify_units (unit_dir, "/usr/local/bin", bin_dir, work, NULL, 0);
    ck_assert_msg (r.status == 0 && r.output [0] == 0,
                   "installed units do not verify (exit %d):\n%s", r.status, r.output);
    free (r.output);
    s_rm_rf (work);

    //  A second install keeps an edited parley.env.
    char env [PATH_MAX];
    snprintf (env, sizeof env, "%s/etc/parley/parley.env", dest);
    s_write_file (env, "PARLEY_BROKER=tcp://edited:5555\n");
    r = s_make_install ("/usr/local", dest);
    ck_assert_msg (r.status == 0, "second make install failed:\n%s", r.output);
    free (r.output);
    char *text = s_read_file (env);
    ck_assert_str_eq (text, "PARLEY_BROKER=tcp://edited:5555\n");
    free (text);
    s_rm_rf (dest);

    //  Another PREFIX: the units point at it.
    s_mkdtemp (dest, sizeof dest);
    r = s_make_install ("/opt/parley", dest);
    ck_assert_msg (r.status == 0, "make install PREFIX=/opt/parley failed:\n%s", r.output);
    free (r.output);
    char unit [PATH_MAX];
    snprintf (unit, sizeof unit, "%s/opt/parley/lib/systemd/system/parley-agent@.service", dest);
    text = s_read_file (unit);
    ck_assert_ptr_nonnull (strstr (text, "\nExecStart=/opt/parley/bin/parley-agent "));
    ck_assert_ptr_null (strstr (text, "/usr/local"));
    free (text);
    s_rm_rf (dest);
}
END_TEST

//  --------------------------------------------------------------------------
//  docker-compose.yml and Dockerfile

static result_t
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
    return s_run (s_root, argv);
}

START_TEST (test_compose_config)
{
    s_setup ();
    s_require_tool ("docker-compose", "docker-compose");
    char file [DIR_MAX + 64];
    snprintf (file, sizeof file, "%s/docker-compose.yml", s_root);
    result_t r = s_compose (file, NULL, "-q");
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
    s_setup ();
    s_require_tool ("docker-compose", "docker-compose");
    char work [64], file [PATH_MAX];
    s_mkdtemp (work, sizeof work);
    snprintf (file, sizeof file, "%s/docker-compose.yml", work);
    s_write_file (file, "services:\n  broker:\n    image: parley\n    restart: sometimes\n"
                        "    ports: 5555\n");
    result_t r = s_compose (file, NULL, "-q");
    ck_assert_msg (r.status != 0, "a broken compose file passed:\n%s", r.output);
    free (r.output);
    s_rm_rf (work);
}
END_TEST

//  Every COPY source in the Dockerfile exists (a renamed script would
//  otherwise only show up in someone's docker build), and it builds from
//  Debian 12 with scripts/deps.sh.
START_TEST (test_dockerfile)
{
    s_setup ();
    char path [DIR_MAX + 300];
    snprintf (path, sizeof path, "%s/Dockerfile", s_root);
    char *text = s_read_file (path);
    ck_assert_ptr_nonnull (strstr (text, "\nFROM debian:bookworm AS build\n"));
    ck_assert_ptr_nonnull (strstr (text, "\nRUN ./scripts/deps.sh\n"));
    int copies = 0;
    for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n")) {
        if (strncmp (line, "COPY ", 5) != 0 || strstr (line, "--from="))
            continue;
        char source [256];
        ck_assert_int_eq (sscanf (line + 5, "%255s", source), 1);
        snprintf (path, sizeof path, "%s/%s", s_root, source);
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
    s_setup ();
    s_require_tool ("dpkg", "dpkg");
    char script [DIR_MAX + 64], broker [DIR_MAX + 64], agent [DIR_MAX + 64];
    snprintf (script, sizeof script, "%s/scripts/runtime-packages.sh", s_root);
    snprintf (broker, sizeof broker, "%s/parley-broker", s_bin);
    snprintf (agent, sizeof agent, "%s/parley-agent", s_bin);
    char *argv [] = { script, broker, agent, NULL };
    result_t r = s_run (NULL, argv);
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
    s_setup ();
    char work [64], path [PATH_MAX], script [DIR_MAX + 64];
    s_mkdtemp (work, sizeof work);
    snprintf (path, sizeof path, "%s/parley-agent", work);
    s_write_file (path, "#!/bin/sh\necho \"args: $*\"\necho \"llm: ${PARLEY_LLM_URL:-none}\"\n");
    ck_assert_int_eq (chmod (path, 0755), 0);
    snprintf (script, sizeof script, "%s/scripts/docker-agent.sh", s_root);

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
    result_t r = s_run (NULL, argv);
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
    r = s_run (NULL, argv2);
    snprintf (expect, sizeof expect, "args: --id Scout --memory-dir %s/Scout\n", work);
    ck_assert_msg (r.status == 0 && strstr (r.output, expect), "got:\n%s", r.output);
    ck_assert_ptr_nonnull (strstr (r.output, "llm: http://models:8000/v1\n"));
    free (r.output);

    setenv ("PATH", old_path, 1);
    free (old_path);
    s_rm_rf (work);
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
    suite_add_tcase (suite, tc);

    tc = tcase_create ("install");
    tcase_add_test (tc, test_make_install);
    suite_add_tcase (suite, tc);

    tc = tcase_create ("docker");
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

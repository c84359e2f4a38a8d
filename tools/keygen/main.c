// SPDX-License-Identifier: MIT
/*  parley-keygen - writes CurveZMQ key pairs for Parley.

    One key pair per run, in CZMQ's certificate format: DIR/NAME (public
    key and metadata; copy it to the broker's --curve-allow directory, or
    to the agents when it is the broker's own) and DIR/NAME_secret (mode
    0600; it never leaves the machine that uses it). The metadata says
    which agent ids the key may say HELLO as and what it may do:

        parley-keygen --name broker                              # the broker's own
        parley-keygen --name scout1 --agents Scout1              # one agent
        parley-keygen --name tap --rights tap                    # a tap
        parley-keygen --name ops --agents '*' --rights agent,tap,admin

    A separate binary rather than a broker subcommand: the machines that
    need keys (an agent's, an operator's laptop) need not carry the broker,
    and the container entry script calls it before the broker starts.
*/
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pconfig.h"
#include "pcurve.h"
#include "plog.h"

static const pconfig_option_t s_options [] = {
    { "dir", 'd', PCONFIG_STR, "PARLEY_KEY_DIR", "./parley-keys", 0, 0, "DIR",
      "directory to write the pair to (created with mode 0700)" },
    { "name", 'n', PCONFIG_STR, NULL, NULL, 0, 0, "NAME",
      "file name of the pair: DIR/NAME and DIR/NAME_secret (required)" },
    { "agents", 'a', PCONFIG_STR, NULL, NULL, 0, 0, "ID[,ID]",
      "agent ids the key may say HELLO as; \"*\" = any id (default: none)" },
    { "rights", 'r', PCONFIG_STR, NULL, "agent", 0, 0, "RIGHTS",
      "what the key may do: agent, tap, admin, comma-separated" },
    { "if-missing", 0, PCONFIG_BOOL, NULL, "false", 0, 0, NULL,
      "exit 0 without writing when DIR/NAME exists already (for entry scripts)" },
    { "copy-public", 0, PCONFIG_STR, NULL, NULL, 0, 0, "DIR",
      "also copy the public certificate to DIR/NAME (e.g. the broker's --curve-allow "
      "directory), unless one is there" },
};

static const char *s_epilogue =
    "The broker loads its own pair with --curve-keys DIR (DIR/broker) and the\n"
    "public keys it accepts from --curve-allow DIR. Agents and taps take\n"
    "--curve-key FILE (their pair) and --curve-server-key FILE (the broker's\n"
    "public file). Existing files are never overwritten. See docs/SECURITY.md.";

int
main (int argc, char **argv)
{
    plog_init ("parley-keygen", NULL);
    pconfig_t *config = pconfig_new (
        "parley-keygen", "parley-keygen --name NAME [OPTION]...",
        "Writes a CurveZMQ key pair (CZMQ certificate format) for a Parley broker,\n"
        "agent, tap or operator, with the agent ids and rights it carries.",
        s_epilogue, s_options, sizeof s_options / sizeof s_options [0]);
    if (!config)
        return PARLEY_EXIT_FAILURE;
    int rc = PARLEY_EXIT_OK;
    if (pconfig_ends (pconfig_parse (config, argc, argv, false), &rc))
        goto done;
    const char *dir = pconfig_str (config, "dir");
    const char *name = pconfig_str (config, "name");
    const char *agents = pconfig_str (config, "agents");
    char why [512];
    unsigned rights = 0;
    if (!name || !*name) {
        fprintf (stderr, "parley-keygen: --name is required\n");
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    if (!pcurve_rights_parse (pconfig_str (config, "rights"), &rights, why, sizeof why)) {
        fprintf (stderr, "parley-keygen: --rights: %s\n", why);
        rc = PARLEY_EXIT_USAGE;
        goto done;
    }
    char path [4096];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    if (pconfig_bool (config, "if-missing") && stat (path, &st) == 0)
        plog_info ("%s exists; left as it is", path);
    else {
        if (pcurve_keygen (dir, name, agents, rights, why, sizeof why) != 0) {
            plog_error ("%s", why);
            rc = PARLEY_EXIT_FAILURE;
            goto done;
        }
        char text [64];
        pcurve_rights_format (rights, text, sizeof text);
        plog_info ("wrote %s and %s_secret (rights %s, agents %s)", path, path, text,
                   agents && *agents? agents: "none");
    }
    const char *copy = pconfig_str (config, "copy-public");
    if (copy && pcurve_copy_public (path, copy, name, why, sizeof why) != 0) {
        plog_error ("%s", why);
        rc = PARLEY_EXIT_FAILURE;
    }
done:
    pconfig_destroy (&config);
    return rc;
}

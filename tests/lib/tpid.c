// SPDX-License-Identifier: MIT
/*  tpid - test helpers: what /proc says about a process (tpid.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpid.h"

bool
tpid_dead (pid_t pid)
{
    char path [64], stat [512] = "";
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return true;
    bool read = fgets (stat, sizeof stat, file) != NULL;
    fclose (file);
    //  The state follows the command's closing parenthesis and a space.
    const char *end = strrchr (stat, ')');
    return !read || !end || end [2] == 'Z' || end [2] == 'X';
}

int
tpid_fds (pid_t pid, int *fds, int max)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/fd", (int) pid);
    DIR *handle = opendir (path);
    if (!handle)
        return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir (handle)))
        if (entry->d_name [0] != '.') {
            if (count < max)
                fds [count] = atoi (entry->d_name);
            count++;
        }
    closedir (handle);
    return count;
}

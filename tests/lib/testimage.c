// SPDX-License-Identifier: MIT
/*  testimage - see testimage.h. */
#include <check.h>
#include <czmq.h>
#include "testimage.h"

uint8_t *
testimage_read (const char *name, size_t *size)
{
    char path[1024];
    const char *dir = getenv ("PARLEY_TEST_DIR");
    snprintf (path, sizeof (path), "%s/../scenarios/images/%s", dir? dir: "tests", name);
    FILE *file = fopen (path, "rb");
    ck_assert_msg (file, "cannot read %s", path);
    uint8_t *data = (uint8_t *) zmalloc (64 * 1024);
    *size = fread (data, 1, 64 * 1024, file);
    fclose (file);
    ck_assert_uint_gt (*size, 8);
    return data;
}

char *
testimage_base64 (const uint8_t *data, size_t size)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = (char *) zmalloc (4 * ((size + 2) / 3) + 1);
    size_t o = 0;
    for (size_t i = 0; i < size; i += 3) {
        uint32_t v = (uint32_t) data[i] << 16;
        if (i + 1 < size)
            v |= (uint32_t) data[i + 1] << 8;
        if (i + 2 < size)
            v |= data[i + 2];
        out[o++] = digits[(v >> 18) & 63];
        out[o++] = digits[(v >> 12) & 63];
        out[o++] = i + 1 < size? digits[(v >> 6) & 63]: '=';
        out[o++] = i + 2 < size? digits[v & 63]: '=';
    }
    return out;
}

// SPDX-License-Identifier: MIT
/*  web_assets - the page, its script and style sheet, built into the
    binary (scripts/web-assets.sh turns tools/web/assets/ into a C file at
    build time with xxd -i), so parley-web needs no install tree and the
    page loads nothing from the network.
*/
#ifndef PARLEY_WEB_ASSETS_H
#define PARLEY_WEB_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *path;           //  "/", "/app.js", "/app.css"
    const char *content_type;
    const unsigned char *data;
    size_t size;
} web_asset_t;

//  The asset served at `path`, or NULL.
const web_asset_t *web_asset_find (const char *path);

#endif

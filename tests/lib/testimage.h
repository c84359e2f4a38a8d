// SPDX-License-Identifier: MIT
/*  testimage - images for the tests of image observations: the demo
    world's PNGs (scenarios/images) and an independent base64 encoder, so
    a test never checks the agent's encoder against itself.
*/
#ifndef PARLEY_TESTIMAGE_H
#define PARLEY_TESTIMAGE_H

#include <stddef.h>
#include <stdint.h>

//  scenarios/images/NAME (e.g. "lamp.png"), read whole; the caller frees.
//  Fails the running test if it cannot be read.
uint8_t *testimage_read (const char *name, size_t *size);

//  Standard padded base64 (RFC 4648); the caller frees.
char *testimage_base64 (const uint8_t *data, size_t size);

#endif

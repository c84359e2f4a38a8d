// SPDX-License-Identifier: MIT
/*  bench_codec - the protocol codec alone: what one message costs to encode
    and to decode (strict, bounded: pmsg_decode), in this process, no
    sockets.

      MAIL     a reply of 1,000 records of 64 B bodies, as the broker
               encodes it for a FETCH and every client decodes it: ns per
               record, encoding and decoding
      SEND 1   a SEND of one message (the one-message-per-SEND path):
               ns per decode
      WRITE 1  a WRITE of one op (64 B value): ns per decode

    Times vary with the machine's load; the instruction counts do not:
    `valgrind --tool=callgrind build/rel/bench/bench_codec --quick` counts
    them (docs/PERFORMANCE.md quotes both).

    Usage: bench_codec [--quick]
*/
#include "bench_util.h"
#include "pmsg.h"

static double
s_now (void)
{
    return (double) pclock_mono_us () / 1e6;
}

static void
s_mail (penc_t *enc, int records)
{
    char body [64];
    memset (body, 'x', sizeof body);
    penc_begin (enc, PMSG_MAIL, 7, 3);
    penc_key (enc, "messages");
    msgpack_pack_array (penc_packer (enc), (size_t) records);
    for (int i = 0; i < records; i++) {
        msgpack_pack_map (penc_packer (enc), 5);
        penc_kv_uint (enc, "seq", 100000 + (uint64_t) i);
        penc_kv_uint (enc, "ts", 1700000000000000ull + (uint64_t) i);
        penc_kv_str (enc, "from", "fansrc", 6);
        penc_kv_str (enc, "to", "all", 3);
        penc_kv_str (enc, "body", body, sizeof body);
    }
    penc_kv_uint (enc, "pending", 0);
    penc_kv_uint (enc, "acked", 99);
}

//  Decodes `enc` `rounds` times; seconds per decode.
static double
s_decode (const penc_t *enc, long rounds)
{
    double start = s_now ();
    for (long r = 0; r < rounds; r++) {
        perr_t err;
        char why [256];
        pmsg_t *msg = pmsg_decode (penc_data (enc), penc_size (enc), NULL, &err, NULL,
                                   why, sizeof why);
        if (!msg) {
            fprintf (stderr, "bench_codec: %s\n", why);
            exit (1);
        }
        pmsg_destroy (&msg);
    }
    return (s_now () - start) / (double) rounds;
}

int
main (int argc, char **argv)
{
    long scale = 1;
    for (int i = 1; i < argc; i++)
        if (strcmp (argv [i], "--quick") == 0)
            scale = 20;
    bench_pin (0, 1);
    penc_t enc;
    penc_init (&enc);
    char body [64];
    memset (body, 'x', sizeof body);

    long rounds = 400 / scale;
    double start = s_now ();
    for (long r = 0; r < rounds; r++)
        s_mail (&enc, 1000);
    double encode = (s_now () - start) / (double) rounds / 1000;
    double decode = s_decode (&enc, rounds) / 1000;
    printf ("bench_codec: MAIL of 1000 records, %zu B: encode %.0f ns, decode %.0f ns "
            "per record\n", penc_size (&enc), encode * 1e9, decode * 1e9);
    bench_result ("codec_mail_encode_record", encode * 1e9, "ns");
    bench_result ("codec_mail_decode_record", decode * 1e9, "ns");

    penc_begin (&enc, PMSG_SEND, 12345, 1);
    penc_key (&enc, "messages");
    msgpack_pack_array (penc_packer (&enc), 1);
    msgpack_pack_map (penc_packer (&enc), 2);
    penc_kv_str (&enc, "to", "receiver", 8);
    penc_kv_str (&enc, "body", body, sizeof body);
    double send = s_decode (&enc, 400000 / scale);
    printf ("bench_codec: SEND of 1 message, %zu B: decode %.0f ns\n", penc_size (&enc),
            send * 1e9);
    bench_result ("codec_send1_decode", send * 1e9, "ns");

    penc_begin (&enc, PMSG_WRITE, 12345, 1);
    penc_key (&enc, "ops");
    msgpack_pack_array (penc_packer (&enc), 1);
    msgpack_pack_map (penc_packer (&enc), 3);
    penc_kv_str (&enc, "op", "update", 6);
    penc_kv_str (&enc, "key", "bk123", 5);
    penc_kv_str (&enc, "value", body, sizeof body);
    double write_op = s_decode (&enc, 400000 / scale);
    printf ("bench_codec: WRITE of 1 op, %zu B: decode %.0f ns\n", penc_size (&enc),
            write_op * 1e9);
    bench_result ("codec_write1_decode", write_op * 1e9, "ns");
    penc_fini (&enc);
    return 0;
}

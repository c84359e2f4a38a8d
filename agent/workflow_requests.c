/*  workflow_requests - the workflow's requests. See workflow_requests.h. */
#include "workflow_requests.h"

#include <string.h>
#include "mpjs.h"

pmsg_t *
wfreq_info (brokerlink_t *link, char *err, size_t err_size)
{
    return brokerlink_simple (link, PMSG_WORKFLOW, err, err_size);
}

pmsg_t *
wfreq_handover (brokerlink_t *link, const json_t *ops, const char *next, const char *status,
                const char *reason, char *err, size_t err_size)
{
    bool has_ops = ops && json_array_size (ops) > 0;
    penc_t *enc = brokerlink_begin (link, PMSG_HANDOVER,
                                    has_ops + !!next + !!status + !!reason);
    if (has_ops) {
        penc_key (enc, "ops");
        mpjs_pack (penc_packer (enc), ops);
    }
    if (next)
        penc_kv_cstr (enc, "next", next);
    if (status)
        penc_kv_cstr (enc, "status", status);
    if (reason)
        penc_kv_cstr (enc, "reason", reason);
    return brokerlink_call (link, err, err_size);
}

pmsg_t *
wfreq_checkpoints (brokerlink_t *link, char *err, size_t err_size)
{
    return brokerlink_simple (link, PMSG_CHECKPOINTS, err, err_size);
}

pmsg_t *
wfreq_checkpoint (brokerlink_t *link, uint64_t number, int64_t since, char *err, size_t err_size)
{
    penc_t *enc = brokerlink_begin (link, PMSG_CHECKPOINT, since >= 0 ? 2 : 1);
    penc_kv_uint (enc, "number", number);
    if (since >= 0)
        penc_kv_uint (enc, "since", (uint64_t) since);
    return brokerlink_call (link, err, err_size);
}

pmsg_t *
wfreq_resume (brokerlink_t *link, uint64_t number, char *err, size_t err_size)
{
    penc_t *enc = brokerlink_begin (link, PMSG_RESUME, 1);
    penc_kv_uint (enc, "number", number);
    return brokerlink_call (link, err, err_size);
}

pmsg_t *
wfreq_get (brokerlink_t *link, const char *const *keys, size_t count, char *err, size_t err_size)
{
    penc_t *enc = brokerlink_begin (link, PMSG_GET, 1);
    penc_key (enc, "keys");
    msgpack_pack_array (penc_packer (enc), (uint32_t) count);
    for (size_t i = 0; i < count; i++)
        penc_cstr (enc, keys [i]);
    return brokerlink_call (link, err, err_size);
}

const char *
wfreq_str (const pmsg_t *msg, const char *field, char *buf, size_t size)
{
    if (!msg || !pmsg_strcpy (msg, field, buf, size))
        buf [0] = 0;
    return buf;
}

// SPDX-License-Identifier: MIT
/*  web_server - routes, the SSE stream and actions over libmicrohttpd.
    See web_server.h.
*/
#include <arpa/inet.h>
#include <assert.h>
#include <czmq.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include "plog.h"
#include "web_assets.h"
#include "web_server.h"

struct _web_server_t {
    struct MHD_Daemon *daemon;
    web_hub_t *hub;
    web_action_fn *actions;
    void *actions_arg;
    web_read_fn *reads;
    void *reads_arg;
    uint16_t port;
};

//  Per request: the POST body being received.
typedef struct {
    char *body;
    size_t size;
    bool too_large;
} s_request_t;

//  Per SSE stream: text not yet handed to libmicrohttpd.
typedef struct {
    web_hub_t *hub;
    bool started;
    uint64_t cursor;
    char *pending;
    size_t offset;
} s_stream_t;

bool
web_server_parse_bind (const char *bind, void *storage, char *why, size_t why_size)
{
    assert (bind);
    assert (storage);
    char host [256];
    const char *colon = strrchr (bind, ':');
    if (!colon || colon == bind) {
        snprintf (why, why_size, "--bind '%s': HOST:PORT expected, e.g. 127.0.0.1:8080", bind);
        return false;
    }
    size_t host_len = (size_t) (colon - bind);
    if (bind [0] == '[' && host_len >= 2 && bind [host_len - 1] == ']') {
        bind++;
        host_len -= 2;
    }
    if (host_len >= sizeof host) {
        snprintf (why, why_size, "--bind '%s': host too long", bind);
        return false;
    }
    memcpy (host, bind, host_len);
    host [host_len] = 0;
    char *end;
    errno = 0;
    long port = strtol (colon + 1, &end, 10);
    if (!colon [1] || *end || errno || port < 0 || port > 65535) {
        snprintf (why, why_size, "--bind: port '%s' is not 0..65535", colon + 1);
        return false;
    }
    memset (storage, 0, sizeof (struct sockaddr_storage));
    struct sockaddr_in *v4 = (struct sockaddr_in *) storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) storage;
    if (streq (host, "localhost"))
        snprintf (host, sizeof host, "127.0.0.1");
    if (inet_pton (AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons ((uint16_t) port);
        return true;
    }
    if (inet_pton (AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons ((uint16_t) port);
        return true;
    }
    snprintf (why, why_size, "--bind: '%s' is not a numeric IPv4 or IPv6 address (or localhost)", host);
    return false;
}

static enum MHD_Result
s_reply (struct MHD_Connection *connection, unsigned int status, const char *type,
         const void *data, size_t size, bool copy, const char *allow)
{
    struct MHD_Response *response = MHD_create_response_from_buffer (size, (void *) data,
        copy? MHD_RESPMEM_MUST_COPY: MHD_RESPMEM_PERSISTENT);
    if (!response)
        return MHD_NO;
    MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header (response, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header (response, "Cache-Control", "no-store");
    //  The page loads nothing from elsewhere; say so to the browser.
    MHD_add_response_header (response, "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    if (allow)
        MHD_add_response_header (response, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result result = MHD_queue_response (connection, status, response);
    MHD_destroy_response (response);
    return result;
}

static enum MHD_Result
s_error (struct MHD_Connection *connection, unsigned int status, const char *message,
         const char *allow)
{
    json_t *body = json_pack ("{s:i,s:s}", "status", (int) status, "error", message);
    char *text = body? json_dumps (body, JSON_COMPACT): NULL;
    json_decref (body);
    enum MHD_Result result = s_reply (connection, status, "application/json",
                                      text? text: "{}", text? strlen (text): 2, true, allow);
    free (text);
    return result;
}

static ssize_t
s_stream_read (void *cls, uint64_t pos, char *buf, size_t max)
{
    s_stream_t *stream = (s_stream_t *) cls;
    while (!stream->pending) {
        if (!stream->started) {
            stream->started = true;
            //  The retry hint: the page reconnects one second after a drop.
            char *init = web_hub_start (stream->hub, &stream->cursor);
            stream->pending = init? zsys_sprintf ("retry: 1000\n%s", init): NULL;
            free (init);
            if (!stream->pending)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        else {
            bool stopped = false;
            stream->pending = web_hub_next (stream->hub, &stream->cursor,
                                            WEB_SERVER_KEEPALIVE_MS, &stopped);
            if (stopped)
                return MHD_CONTENT_READER_END_OF_STREAM;
            if (!stream->pending)
                stream->pending = strdup (": keepalive\n\n");
        }
        stream->offset = 0;
    }
    size_t left = strlen (stream->pending + stream->offset);
    size_t size = left < max? left: max;
    memcpy (buf, stream->pending + stream->offset, size);
    stream->offset += size;
    if (stream->offset >= strlen (stream->pending)) {
        free (stream->pending);
        stream->pending = NULL;
    }
    return (ssize_t) size;
}

static void
s_stream_free (void *cls)
{
    s_stream_t *stream = (s_stream_t *) cls;
    web_hub_stream_closed (stream->hub);
    free (stream->pending);
    free (stream);
}

static enum MHD_Result
s_events (web_server_t *self, struct MHD_Connection *connection)
{
    s_stream_t *stream = (s_stream_t *) zmalloc (sizeof *stream);
    stream->hub = self->hub;
    struct MHD_Response *response = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN,
        16 * 1024, s_stream_read, stream, s_stream_free);
    if (!response) {
        free (stream);
        return MHD_NO;
    }
    MHD_add_response_header (response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header (response, "Cache-Control", "no-store");
    MHD_add_response_header (response, "X-Accel-Buffering", "no");
    enum MHD_Result result = MHD_queue_response (connection, MHD_HTTP_OK, response);
    MHD_destroy_response (response);
    return result;
}

static enum MHD_Result
s_frame (web_server_t *self, struct MHD_Connection *connection, const char *number)
{
    char *end;
    errno = 0;
    unsigned long long tseq = strtoull (number, &end, 10);
    if (!*number || *end || errno || !isdigit ((unsigned char) *number))
        return s_error (connection, MHD_HTTP_NOT_FOUND, "no such frame", NULL);
    char *json = web_hub_frame (self->hub, (uint64_t) tseq);
    if (!json)
        return s_error (connection, MHD_HTTP_NOT_FOUND,
                        "no such frame (or no longer kept: only the most recent are)", NULL);
    enum MHD_Result result = s_reply (connection, MHD_HTTP_OK, "application/json",
                                      json, strlen (json), true, NULL);
    free (json);
    return result;
}

static enum MHD_Result
s_model (web_server_t *self, struct MHD_Connection *connection)
{
    char *json = web_hub_model (self->hub);
    if (!json)
        return s_error (connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory", NULL);
    enum MHD_Result result = s_reply (connection, MHD_HTTP_OK, "application/json",
                                      json, strlen (json), true, NULL);
    free (json);
    return result;
}

static enum MHD_Result
s_workflow (web_server_t *self, struct MHD_Connection *connection, const char *path)
{
    if (!self->reads)
        return s_error (connection, MHD_HTTP_NOT_FOUND,
                        "no broker to ask: a replay has only the recorded workflow events", NULL);
    json_t *reply = NULL;
    char why [512] = "";
    int status = self->reads (self->reads_arg, path, &reply, why, sizeof why);
    if (status != MHD_HTTP_OK || !reply) {
        json_decref (reply);
        return s_error (connection, status == MHD_HTTP_OK? MHD_HTTP_INTERNAL_SERVER_ERROR:
                        (unsigned int) status, why [0]? why: "read failed", NULL);
    }
    char *json = json_dumps (reply, JSON_COMPACT);
    json_decref (reply);
    enum MHD_Result result = s_reply (connection, MHD_HTTP_OK, "application/json",
                                      json? json: "{}", json? strlen (json): 2, true, NULL);
    free (json);
    return result;
}

static enum MHD_Result
s_action (web_server_t *self, struct MHD_Connection *connection, web_action_t action,
          s_request_t *request)
{
    if (!self->actions)
        return s_error (connection, MHD_HTTP_FORBIDDEN,
                        "read-only: start parley-web with --allow-actions to act", NULL);
    if (request->too_large)
        return s_error (connection, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large", NULL);
    const char *type = MHD_lookup_connection_value (connection, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!type || strncmp (type, "application/json", 16) != 0)
        return s_error (connection, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                        "actions need Content-Type: application/json", NULL);
    json_error_t error;
    json_t *body = request->size? json_loadb (request->body, request->size, 0, &error): json_object ();
    if (!json_is_object (body)) {
        json_decref (body);
        return s_error (connection, MHD_HTTP_BAD_REQUEST, "the body is not a JSON object", NULL);
    }
    char why [512] = "";
    int status = self->actions (self->actions_arg, action, body, why, sizeof why);
    json_decref (body);
    if (status == MHD_HTTP_OK)
        return s_reply (connection, MHD_HTTP_OK, "application/json", "{\"ok\":true}", 11, false, NULL);
    return s_error (connection, (unsigned int) status, why [0]? why: "action failed", NULL);
}

//  The action an /api/actions/<name> route names; false for none.
static bool
s_action_named (const char *name, web_action_t *action)
{
    static const struct { const char *name; web_action_t action; } s_names [] = {
        { "world-reset", WEB_ACTION_WORLD_RESET }, { "state-set", WEB_ACTION_STATE_SET },
        { "resume", WEB_ACTION_RESUME }, { "submit", WEB_ACTION_SUBMIT },
    };
    for (size_t i = 0; i < sizeof s_names / sizeof s_names [0]; i++)
        if (streq (name, s_names [i].name)) {
            *action = s_names [i].action;
            return true;
        }
    return false;
}

static enum MHD_Result
s_handle (void *cls, struct MHD_Connection *connection, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    web_server_t *self = (web_server_t *) cls;
    bool get = streq (method, MHD_HTTP_METHOD_GET) || streq (method, MHD_HTTP_METHOD_HEAD);
    bool post = streq (method, MHD_HTTP_METHOD_POST);
    if (post && strncmp (url, "/api/actions/", 13) == 0) {
        s_request_t *request = (s_request_t *) *con_cls;
        if (!request) {
            *con_cls = zmalloc (sizeof (s_request_t));
            return MHD_YES;
        }
        if (*upload_data_size) {
            if (request->size + *upload_data_size > WEB_SERVER_MAX_BODY)
                request->too_large = true;
            else {
                request->body = (char *) realloc (request->body, request->size + *upload_data_size);
                memcpy (request->body + request->size, upload_data, *upload_data_size);
                request->size += *upload_data_size;
            }
            *upload_data_size = 0;
            return MHD_YES;
        }
        web_action_t action;
        if (s_action_named (url + 13, &action))
            return s_action (self, connection, action, request);
        return s_error (connection, MHD_HTTP_NOT_FOUND, "no such action", NULL);
    }
    const web_asset_t *asset = web_asset_find (url);
    bool events = streq (url, "/events");
    bool frame = strncmp (url, "/api/frame/", 11) == 0;
    bool model = streq (url, "/api/model");
    bool workflow = streq (url, "/api/workflow") || strncmp (url, "/api/workflow/", 14) == 0;
    web_action_t ignored;
    bool action = strncmp (url, "/api/actions/", 13) == 0 && s_action_named (url + 13, &ignored);
    if (!asset && !events && !frame && !action && !model && !workflow)
        return s_error (connection, MHD_HTTP_NOT_FOUND, "not found", NULL);
    if (action)
        return s_error (connection, MHD_HTTP_METHOD_NOT_ALLOWED, "use POST", "POST");
    if (!get)
        return s_error (connection, MHD_HTTP_METHOD_NOT_ALLOWED, "use GET", "GET, HEAD");
    if (asset)
        return s_reply (connection, MHD_HTTP_OK, asset->content_type, asset->data, asset->size,
                        false, NULL);
    if (events)
        return s_events (self, connection);
    if (model)
        return s_model (self, connection);
    if (workflow)
        return s_workflow (self, connection, url [13]? url + 14: "");
    return s_frame (self, connection, url + 11);
}

static void
s_completed (void *cls, struct MHD_Connection *connection, void **con_cls,
             enum MHD_RequestTerminationCode code)
{
    s_request_t *request = (s_request_t *) *con_cls;
    if (request) {
        free (request->body);
        free (request);
        *con_cls = NULL;
    }
}

static void
s_log (void *arg, const char *format, va_list args)
{
    char line [512];
    vsnprintf (line, sizeof line, format, args);
    size_t len = strlen (line);
    while (len && line [len - 1] == '\n')
        line [--len] = 0;
    //  A page closed while its stream was being written is ordinary.
    if (strstr (line, "no longer available"))
        plog_debug ("http: %s", line);
    else
        plog_warn ("http: %s", line);
}

web_server_t *
web_server_new (const char *bind, web_hub_t *hub, web_action_fn *actions, void *actions_arg,
                char *why, size_t why_size)
{
    assert (bind);
    assert (hub);
    struct sockaddr_storage address;
    if (!web_server_parse_bind (bind, &address, why, why_size))
        return NULL;
    web_server_t *self = (web_server_t *) zmalloc (sizeof *self);
    self->hub = hub;
    self->actions = actions;
    self->actions_arg = actions_arg;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION
                       | MHD_USE_ERROR_LOG;
    if (address.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    self->daemon = MHD_start_daemon (flags, 0, NULL, NULL, s_handle, self,
        MHD_OPTION_EXTERNAL_LOGGER, s_log, self,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &address,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int) WEB_SERVER_MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) (WEB_SERVER_KEEPALIVE_MS / 1000 * 4),
        MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_END);
    if (!self->daemon) {
        snprintf (why, why_size, "cannot listen on %s: %s", bind, strerror (errno));
        free (self);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    self->port = info? info->port: 0;
    return self;
}

void
web_server_set_reads (web_server_t *self, web_read_fn *reads, void *reads_arg)
{
    assert (self);
    self->reads = reads;
    self->reads_arg = reads_arg;
}

void
web_server_destroy (web_server_t **self_p)
{
    assert (self_p);
    web_server_t *self = *self_p;
    if (!self)
        return;
    MHD_stop_daemon (self->daemon);
    free (self);
    *self_p = NULL;
}

uint16_t
web_server_port (web_server_t *self)
{
    assert (self);
    return self->port;
}

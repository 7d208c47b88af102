/*
 * kctl._native: the per-record hot loops of kctl in C, each the exact equivalent of a pure
 * Python function that stays the reference (and the fallback where this module is not built):
 *
 *   records_json(data, base_offset, first_ts, count, base_seq, text=None)
 *       == kctl.logfmt.fast.py_records_json: the record metadata of one magic-2 batch as JSON
 *       objects, or DumpLogSegments' record lines (dump-segment --deep-iteration); its
 *       offsets come back as a range when consecutive (a list otherwise);
 *   jsonl_block(msgs, types)
 *       == kctl.formatters.stream.jsonl_block: a batch of consumed confluent-kafka messages
 *       as JSON lines (consume -o jsonl);
 *   produce_chunk(produce, topic, data, start, end, sep, catch)
 *       the loop of kctl.broker.produce.Sender.plain/keyed over a chunk of input as read: one
 *       produce() call per line;
 *   Producer(config, topic, definite, debug)
 *       kctl's own producer on the librdkafka confluent-kafka loaded (rd_kafka_produce() per
 *       line, delivery reports counted in C), wrapped by kctl.broker.native_producer; its
 *       reference is the same Sender loops on confluent-kafka's Producer.
 *
 * Each returns None (or stops early) wherever the Python function would, so the callers keep
 * one behaviour; tests compare both on real and generated inputs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---- a growing byte buffer ------------------------------------------------------------- */

typedef struct {
    char *p;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline void put(Buf *b, const char *s, Py_ssize_t n) {
    memcpy(b->p + b->len, s, (size_t)n);
    b->len += n;
}

/* A buffer kept between calls (the GIL serialises them): no fresh pages to fault in for every
 * batch. Given back when a call made it larger than KEEP. */
#define KEEP (16 << 20)
static void buf_done(Buf *b, Buf *keep) {
    if (b->cap <= KEEP) {
        b->len = 0;
        *keep = *b;
    } else {
        PyMem_Free(b->p);
        *keep = (Buf){0};
    }
}

#define PUT_LIT(b, s) put((b), (s), (Py_ssize_t)(sizeof(s) - 1))

/* Decimal digits of v (at most 20 bytes, two at a time); the caller has reserved room. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline void put_i64(Buf *b, int64_t v) {
    char tmp[24];
    int i = 24;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        i -= 2;
        memcpy(tmp + i, digit_pairs + 2 * r, 2);
    }
    if (u >= 10) {
        i -= 2;
        memcpy(tmp + i, digit_pairs + 2 * u, 2);
    } else {
        tmp[--i] = (char)('0' + u);
    }
    if (v < 0)
        tmp[--i] = '-';
    put(b, tmp + i, 24 - i);
}

/* ---- records_json ---------------------------------------------------------------------- */

/* The fast path's zigzag varint of one to three bytes at *pos (as kctl.logfmt.fast reads them):
 * 0 on success, -1 when it runs past the end or needs a fourth byte (declined). */
static inline int zz_varint(const unsigned char *d, Py_ssize_t n, Py_ssize_t *pos, int64_t *out) {
    Py_ssize_t p = *pos;
    if (p >= n)
        return -1;
    uint32_t b = d[p];
    uint32_t raw;
    if (b < 0x80) {
        raw = b;
        p += 1;
    } else {
        if (p + 1 >= n)
            return -1;
        uint32_t b2 = d[p + 1];
        if (b2 < 0x80) {
            raw = (b & 0x7F) | (b2 << 7);
            p += 2;
        } else {
            if (p + 2 >= n)
                return -1;
            uint32_t b3 = d[p + 2];
            if (b3 >= 0x80)
                return -1;
            raw = (b & 0x7F) | ((b2 & 0x7F) << 7) | (b3 << 14);
            p += 3;
        }
    }
    *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    *pos = p;
    return 0;
}

/* Python int -> int64 within (lo, hi), else 0 with no error set (the caller returns None). */
static int in_range(PyObject *o, int64_t lo, int64_t hi, int64_t *out) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v <= lo || v >= hi)
        return 0;
    *out = v;
    return 1;
}

static Buf records_buf;

static PyObject *records_json(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"data", "base_offset", "first_ts", "count", "base_seq", "text", NULL};
    Py_buffer view;
    PyObject *o_base, *o_ts, *o_count, *o_seq, *o_text = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*OOOO|O", kwlist, &view, &o_base, &o_ts,
                                     &o_count, &o_seq, &o_text))
        return NULL;
    PyObject *result = NULL;
    Buf out = records_buf;
    records_buf = (Buf){0};
    PyObject *offsets = NULL;
    int64_t *offs = NULL;
    const int64_t LO = INT64_MIN + ((int64_t)1 << 32), HI = INT64_MAX - ((int64_t)1 << 32) + 1;
    int64_t base, first_ts, count, base_seq;
    int r;
    if ((r = in_range(o_count, INT64_MIN, INT64_MAX, &count)) <= 0 || count <= 0 ||
        (r = in_range(o_base, LO, HI, &base)) <= 0 || (r = in_range(o_ts, LO, HI, &first_ts)) <= 0)
        goto none_or_error;
    {
        int overflow = 0;
        base_seq = PyLong_AsLongLongAndOverflow(o_seq, &overflow);
        if (base_seq == -1 && PyErr_Occurred())
            goto done;
        if (overflow)
            goto none; /* Python would compute with it; the general path is exact */
    }
    const char *ts_name = NULL;
    Py_ssize_t ts_len = 0;
    int text = o_text != Py_None;
    if (text) {
        if (!PyUnicode_Check(o_text)) {
            PyErr_SetString(PyExc_TypeError, "text must be a str or None");
            goto done;
        }
        if (!PyUnicode_IS_ASCII(o_text))
            goto none;
        ts_name = PyUnicode_AsUTF8AndSize(o_text, &ts_len);
        if (!ts_name)
            goto done;
    }
    const unsigned char *d = view.buf;
    const Py_ssize_t n = view.len;
    const int seq = base_seq >= 0;
    if (count > n) /* every record takes at least one byte */
        goto none;
    /* Offsets kept as int64 until the end: a range when consecutive (the common case: no
     * Python int per record), else a list. */
    offs = PyMem_Malloc((size_t)count * sizeof(int64_t));
    if (!offs) {
        PyErr_NoMemory();
        goto done;
    }
    int consecutive = 1;
    /* per record at most: fixed text + 5 numbers of 20 digits + the timestamp type name */
    const Py_ssize_t per = 96 + 5 * 21 + ts_len;
    Py_ssize_t pos = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t len, ts_delta, off_delta, key_len, value_len;
        if (zz_varint(d, n, &pos, &len) < 0)
            goto none;
        Py_ssize_t rec_end = pos + (Py_ssize_t)len;
        pos += 1; /* the attributes byte */
        if (zz_varint(d, n, &pos, &ts_delta) < 0 || zz_varint(d, n, &pos, &off_delta) < 0 ||
            zz_varint(d, n, &pos, &key_len) < 0)
            goto none;
        if (key_len > 0)
            pos += (Py_ssize_t)key_len;
        if (zz_varint(d, n, &pos, &value_len) < 0)
            goto none;
        if (value_len > 0)
            pos += (Py_ssize_t)value_len;
        /* no headers (a zero count byte) and nothing left over: else the general path */
        if (pos >= n || d[pos] || pos + 1 != rec_end || key_len < -1 || value_len < -1)
            goto none;
        pos = rec_end;
        int64_t offset = base + off_delta;
        offs[i] = offset;
        consecutive &= offset == offs[0] + i;
        if (buf_reserve(&out, per) < 0)
            goto done;
        if (text) {
            PUT_LIT(&out, "| offset: ");
            put_i64(&out, offset);
            put(&out, " ", 1);
            put(&out, ts_name, ts_len);
            PUT_LIT(&out, ": ");
            put_i64(&out, first_ts + ts_delta);
            PUT_LIT(&out, " keySize: ");
            put_i64(&out, key_len);
            PUT_LIT(&out, " valueSize: ");
            put_i64(&out, value_len);
            PUT_LIT(&out, " sequence: ");
            put_i64(&out, seq ? ((base_seq + off_delta) & 0x7FFFFFFF) : -1);
            PUT_LIT(&out, " headerKeys: []\n");
        } else {
            PUT_LIT(&out, "{\"offset\":");
            put_i64(&out, offset);
            PUT_LIT(&out, ",\"timestamp\":");
            put_i64(&out, first_ts + ts_delta);
            PUT_LIT(&out, ",\"key_size\":");
            put_i64(&out, key_len);
            PUT_LIT(&out, ",\"value_size\":");
            put_i64(&out, value_len);
            PUT_LIT(&out, ",\"sequence\":");
            put_i64(&out, seq ? ((base_seq + off_delta) & 0x7FFFFFFF) : -1);
            PUT_LIT(&out, ",\"header_keys\":[]},");
        }
    }
    if (pos != n)
        goto none;
    if (consecutive) {
        offsets = PyObject_CallFunction((PyObject *)&PyRange_Type, "LL", (long long)offs[0],
                                        (long long)(offs[0] + count));
    } else if ((offsets = PyList_New((Py_ssize_t)count))) {
        for (int64_t i = 0; i < count; i++) {
            PyObject *o = PyLong_FromLongLong(offs[i]);
            if (!o)
                goto done;
            PyList_SET_ITEM(offsets, (Py_ssize_t)i, o);
        }
    }
    if (!offsets)
        goto done;
    {
        Py_ssize_t len = text ? out.len : out.len - 1; /* JSON: no comma after the last */
        PyObject *s = PyUnicode_New(len, 127);
        if (!s)
            goto done;
        memcpy(PyUnicode_DATA(s), out.p, (size_t)len);
        result = PyTuple_Pack(2, s, offsets);
        Py_DECREF(s);
    }
    goto done;
none_or_error:
    if (r < 0)
        goto done;
none:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(offsets);
    PyMem_Free(offs);
    buf_done(&out, &records_buf);
    PyBuffer_Release(&view);
    return result;
}

/* ---- jsonl_block ----------------------------------------------------------------------- */

/* Strict UTF-8 (as Python's decoder): no overlong forms, surrogates or code points past
 * U+10FFFF. */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
        } else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80)
                return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80)
                return 0;
            if (c == 0xE0 && s[i + 1] < 0xA0)
                return 0; /* overlong */
            if (c == 0xED && s[i + 1] >= 0xA0)
                return 0; /* surrogate */
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 ||
                (s[i + 3] & 0xC0) != 0x80)
                return 0;
            if (c == 0xF0 && s[i + 1] < 0x90)
                return 0; /* overlong */
            if (c == 0xF4 && s[i + 1] >= 0x90)
                return 0; /* past U+10FFFF */
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Eight bytes at a time (bit tricks on a 64-bit word): any byte below 0x20, a quote or a
 * backslash; any byte from 0x80 up. */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t has_zero(uint64_t x) { return (x - ONES) & ~x & HIGHS; }

/* JSON string contents that need no escape (no control character, quote or backslash) and
 * are valid UTF-8: written as they are, as orjson writes them. */
static int json_plain(const unsigned char *s, Py_ssize_t n) {
    uint64_t high = 0;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        /* bytes below 0x20 (exact for "any": bytes with the high bit are masked out) */
        if (((w - ONES * 0x20) & ~w & HIGHS) || has_zero(w ^ (ONES * '"')) ||
            has_zero(w ^ (ONES * '\\')))
            return 0;
        high |= w & HIGHS;
    }
    for (; i < n; i++) {
        unsigned char c = s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            return 0;
        high |= c & 0x80;
    }
    return !high || utf8_valid(s, n);
}

/* The methods of confluent_kafka.Message used here, looked up on its type once per call. */
enum { M_TOPIC, M_PARTITION, M_OFFSET, M_KEY, M_VALUE, M_HEADERS, M_TIMESTAMP, M_EPOCH, M_COUNT };
static const char *method_names[M_COUNT] = {"topic", "partition", "offset", "key",
                                            "value", "headers",   "timestamp", "leader_epoch"};

static inline PyObject *call0(PyObject *method, PyObject *m) {
    return PyObject_Vectorcall(method, &m, 1, NULL);
}

/* An int result as int64 into *out: 1, or 0 when it is not an int64 (None included). */
static int as_i64(PyObject *o, int64_t *out) {
    if (!PyLong_Check(o))
        return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return 1;
}

static Buf jsonl_buf;

static PyObject *jsonl_block(PyObject *self, PyObject *args) {
    PyObject *msgs, *types;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &msgs, &PyTuple_Type, &types))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(msgs);
    if (count == 0)
        Py_RETURN_NONE;
    PyObject *methods[M_COUNT] = {0};
    PyObject *result = NULL;
    PyObject *topic0 = NULL;
    Buf out = jsonl_buf;
    jsonl_buf = (Buf){0};
    PyTypeObject *mtype = Py_TYPE(PyList_GET_ITEM(msgs, 0));
    for (int k = 0; k < M_COUNT; k++) {
        methods[k] = PyObject_GetAttrString((PyObject *)mtype, method_names[k]);
        if (!methods[k]) {
            PyErr_Clear();
            goto none;
        }
    }
    int keyed = -1;       /* keys all present (1) or all absent (0) */
    long kind0 = -1;      /* the one timestamp type */
    char head[512];       /* {"topic":"T","partition": */
    Py_ssize_t head_len = 0;
    char kind_text[64];   /* ,"timestamp_type":"CreateTime","key": */
    Py_ssize_t kind_len = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *m = PyList_GET_ITEM(msgs, i);
        if (Py_TYPE(m) != mtype)
            goto none;
        PyObject *v[M_COUNT] = {0};
        int ok = 1;
        for (int k = 0; k < M_COUNT; k++) {
            v[k] = call0(methods[k], m);
            if (!v[k]) {
                for (int j = 0; j < k; j++)
                    Py_DECREF(v[j]);
                goto done;
            }
        }
        int64_t partition, offset, ts, epoch;
        Py_ssize_t klen = 0, vlen;
        const char *kbuf = NULL, *vbuf;
        /* no headers; one topic; a value; an epoch; keys all present or all absent */
        int has_headers = PyObject_IsTrue(v[M_HEADERS]);
        if (has_headers < 0) {
            ok = -1;
            goto release;
        }
        if (has_headers || !PyBytes_Check(v[M_VALUE]) || !as_i64(v[M_EPOCH], &epoch) ||
            !as_i64(v[M_PARTITION], &partition) || !as_i64(v[M_OFFSET], &offset)) {
            ok = 0;
            goto release;
        }
        if (!PyTuple_Check(v[M_TIMESTAMP]) || PyTuple_GET_SIZE(v[M_TIMESTAMP]) != 2 ||
            !as_i64(PyTuple_GET_ITEM(v[M_TIMESTAMP], 1), &ts)) {
            ok = 0;
            goto release;
        }
        {
            PyObject *kobj = PyTuple_GET_ITEM(v[M_TIMESTAMP], 0);
            int overflow = 0;
            long kind = PyLong_Check(kobj) ? PyLong_AsLongAndOverflow(kobj, &overflow) : -1;
            if (overflow || kind <= 0 || kind >= PyTuple_GET_SIZE(types) ||
                (kind0 >= 0 && kind != kind0)) {
                PyErr_Clear();
                ok = 0;
                goto release;
            }
            if (kind0 < 0) {
                kind0 = kind;
                PyObject *name = PyTuple_GET_ITEM(types, kind);
                Py_ssize_t nlen;
                const char *ntext = PyUnicode_Check(name) ? PyUnicode_AsUTF8AndSize(name, &nlen)
                                                          : NULL;
                if (!ntext || nlen > 32 || !json_plain((const unsigned char *)ntext, nlen)) {
                    PyErr_Clear();
                    ok = 0;
                    goto release;
                }
                kind_len = snprintf(kind_text, sizeof kind_text,
                                    ",\"timestamp_type\":\"%s\",\"key\":", ntext);
            }
        }
        if (topic0 == NULL) {
            Py_ssize_t tlen;
            const char *t = PyUnicode_Check(v[M_TOPIC]) ? PyUnicode_AsUTF8AndSize(v[M_TOPIC], &tlen)
                                                        : NULL;
            if (!t || tlen > 400 || !json_plain((const unsigned char *)t, tlen)) {
                PyErr_Clear();
                ok = 0;
                goto release;
            }
            topic0 = Py_NewRef(v[M_TOPIC]);
            head_len = snprintf(head, sizeof head, "{\"topic\":\"%s\",\"partition\":", t);
        } else if (v[M_TOPIC] != topic0) {
            int eq = PyUnicode_Check(v[M_TOPIC]) ? PyUnicode_Compare(v[M_TOPIC], topic0) : 1;
            if (eq == -1 && PyErr_Occurred()) {
                ok = -1;
                goto release;
            }
            if (eq != 0) {
                ok = 0;
                goto release;
            }
        }
        if (v[M_KEY] == Py_None) {
            if (keyed == 1) {
                ok = 0;
                goto release;
            }
            keyed = 0;
        } else {
            if (keyed == 0 || !PyBytes_Check(v[M_KEY])) {
                ok = 0;
                goto release;
            }
            keyed = 1;
            kbuf = PyBytes_AS_STRING(v[M_KEY]);
            klen = PyBytes_GET_SIZE(v[M_KEY]);
            if (!json_plain((const unsigned char *)kbuf, klen)) {
                ok = 0;
                goto release;
            }
        }
        vbuf = PyBytes_AS_STRING(v[M_VALUE]);
        vlen = PyBytes_GET_SIZE(v[M_VALUE]);
        if (!json_plain((const unsigned char *)vbuf, vlen)) {
            ok = 0;
            goto release;
        }
        if (buf_reserve(&out, head_len + kind_len + klen + vlen + 200) < 0) {
            ok = -1;
            goto release;
        }
        put(&out, head, head_len);
        put_i64(&out, partition);
        PUT_LIT(&out, ",\"offset\":");
        put_i64(&out, offset);
        PUT_LIT(&out, ",\"timestamp\":");
        put_i64(&out, ts);
        put(&out, kind_text, kind_len);
        if (keyed) {
            put(&out, "\"", 1);
            put(&out, kbuf, klen);
            put(&out, "\"", 1);
        } else {
            PUT_LIT(&out, "null");
        }
        PUT_LIT(&out, ",\"value\":\"");
        put(&out, vbuf, vlen);
        PUT_LIT(&out, "\",\"headers\":[],\"leader_epoch\":");
        put_i64(&out, epoch);
        PUT_LIT(&out, "}\n");
    release:
        for (int k = 0; k < M_COUNT; k++)
            Py_DECREF(v[k]);
        if (ok < 0)
            goto done;
        if (!ok)
            goto none;
    }
    result = PyBytes_FromStringAndSize(out.p, out.len);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    for (int k = 0; k < M_COUNT; k++)
        Py_XDECREF(methods[k]);
    Py_XDECREF(topic0);
    buf_done(&out, &jsonl_buf);
    return result;
}

/* ---- produce_chunk --------------------------------------------------------------------- */

/* One line to produce(): with a separator found, produce(topic, value, key); else
 * produce(topic, line). Returns produce()'s result (NULL with the exception set); *plain set
 * when it went as a value alone while a separator was asked for. */
static PyObject *produce_one(PyObject *produce, PyObject *topic, const char *lb, Py_ssize_t ll,
                             const char *sbuf, Py_ssize_t slen, int *plain) {
    const char *at = NULL;
    if (sbuf)
        at = slen == 1 ? memchr(lb, sbuf[0], (size_t)ll) : memmem(lb, (size_t)ll, sbuf, (size_t)slen);
    *plain = sbuf && !at;
    PyObject *res;
    if (at) {
        Py_ssize_t kl = at - lb;
        PyObject *call[3];
        call[0] = topic;
        call[2] = PyBytes_FromStringAndSize(lb, kl);
        if (!call[2])
            return NULL;
        call[1] = PyBytes_FromStringAndSize(at + slen, ll - kl - slen);
        if (!call[1]) {
            Py_DECREF(call[2]);
            return NULL;
        }
        res = PyObject_Vectorcall(produce, call, 3, NULL);
        Py_DECREF(call[1]);
        Py_DECREF(call[2]);
        return res;
    }
    PyObject *value = PyBytes_FromStringAndSize(lb, ll);
    if (!value)
        return NULL;
    PyObject *call[2] = {topic, value};
    res = PyObject_Vectorcall(produce, call, 2, NULL);
    Py_DECREF(value);
    return res;
}

static int parse_sep(PyObject *sep, const char **sbuf, Py_ssize_t *slen) {
    *sbuf = NULL;
    *slen = 0;
    if (sep == Py_None)
        return 0;
    if (!PyBytes_Check(sep) || PyBytes_GET_SIZE(sep) == 0) {
        PyErr_SetString(PyExc_TypeError, "sep must be non-empty bytes or None");
        return -1;
    }
    *sbuf = PyBytes_AS_STRING(sep);
    *slen = PyBytes_GET_SIZE(sep);
    return 0;
}

/* The arguments both line producers share: the separator (parse_sep) and the chunk
 * data[start:end], which must lie within data. -1 with an exception set when they are wrong. */
static int chunk_args(PyObject *sep, const Py_buffer *view, Py_ssize_t start, Py_ssize_t end,
                      const char **sbuf, Py_ssize_t *slen) {
    if (parse_sep(sep, sbuf, slen) < 0)
        return -1;
    if (start < 0 || end > view->len || start > end) {
        PyErr_SetString(PyExc_ValueError, "start and end must lie within data");
        return -1;
    }
    return 0;
}

/* produce_chunk(produce, topic, data, start, end, sep, catch) -> (stopped, records, nbytes, unkeyed)
 * The lines of data[start:end] — each ending in a newline, but for the last, which may end at
 * ``end`` without one — each handed to produce(topic, line), or with ``sep`` (bytes)
 * produce(topic, value, key) for KEY<sep>VALUE lines (a line without the separator goes as a
 * value alone), with no bytes object per line. Stops at the first line whose produce() raises
 * an exception of ``catch`` (cleared: the line was not handed over); any other exception
 * propagates. ``stopped``: where that line starts, or ``end`` when all went; ``records``
 * handed over, their key and value bytes, and how many of them had no separator. */
static PyObject *produce_chunk(PyObject *self, PyObject *args) {
    PyObject *produce, *topic, *sep, *catch;
    Py_buffer view;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "OOy*nnOO", &produce, &topic, &view, &start, &end, &sep, &catch))
        return NULL;
    const char *sbuf;
    Py_ssize_t slen;
    PyObject *result = NULL;
    if (chunk_args(sep, &view, start, end, &sbuf, &slen) < 0)
        goto done;
    const char *d = view.buf;
    Py_ssize_t pos = start, records = 0, nbytes = 0, unkeyed = 0;
    while (pos < end) {
        const char *nl = memchr(d + pos, '\n', (size_t)(end - pos));
        Py_ssize_t line_end = nl ? nl - d : end;
        int plain;
        PyObject *res = produce_one(produce, topic, d + pos, line_end - pos, sbuf, slen, &plain);
        if (!res) {
            if (PyErr_ExceptionMatches(catch)) {
                PyErr_Clear();
                break;
            }
            goto done;
        }
        Py_DECREF(res);
        records++;
        unkeyed += plain;
        nbytes += line_end - pos - (sbuf && !plain ? slen : 0);
        pos = nl ? line_end + 1 : end;
    }
    result = Py_BuildValue("(nnnn)", pos, records, nbytes, unkeyed);
done:
    PyBuffer_Release(&view);
    return result;
}

/* ---- Producer: kctl's own librdkafka producer ----------------------------------------- */

/* The librdkafka confluent-kafka already loaded (found among the loaded objects, dlopen'ed
 * again by its path: the same library, no second copy), driven through its public C API the
 * way kcat does: rd_kafka_produce() per line, delivery reports counted here in C. The few
 * prototypes are declared below from librdkafka's public, stable rdkafka.h (not vendored); the
 * library's version is checked against the range tested, every symbol is looked up, and
 * anything unexpected makes load_rdkafka() fail so that kctl falls back to confluent-kafka. */

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_topic_conf_s rd_kafka_topic_conf_t;
typedef int rk_err_t; /* rd_kafka_resp_err_t */

typedef struct { /* rd_kafka_message_t: public and unchanged since librdkafka 0.9 */
    rk_err_t err;
    rd_kafka_topic_t *rkt;
    int32_t partition;
    void *payload;
    size_t len;
    void *key;
    size_t key_len;
    int64_t offset;
    void *_private;
} rk_message_t;

typedef struct { int32_t id; char *host; int port; } rk_md_broker_t;
typedef struct {
    int32_t id;
    rk_err_t err;
    int32_t leader;
    int replica_cnt;
    int32_t *replicas;
    int isr_cnt;
    int32_t *isrs;
} rk_md_partition_t;
typedef struct {
    char *topic;
    int partition_cnt;
    rk_md_partition_t *partitions;
    rk_err_t err;
} rk_md_topic_t;
typedef struct {
    int broker_cnt;
    rk_md_broker_t *brokers;
    int topic_cnt;
    rk_md_topic_t *topics;
    int32_t orig_broker_id;
    char *orig_broker_name;
} rk_metadata_t;

#define RK_PRODUCER 0
#define RK_CONF_OK 0
#define RK_PARTITION_UA (-1)
#define RK_MSG_F_COPY 0x2
#define RK_PURGE_F_QUEUE 0x1
#define RK_PURGE_F_INFLIGHT 0x2
#define RK_PURGE_F_NON_BLOCKING 0x4
#define RK_ERR_QUEUE_FULL (-184)
#define RK_ERR_FATAL (-150)
/* librdkafka versions tested with this code (rd_kafka_version(): 0xMMmmrrxx) */
#define RK_MIN_VERSION 0x02000000
#define RK_MAX_VERSION 0x03000000

static struct {
    int loaded; /* 0 not tried, 1 ready, -1 failed */
    char why[512];
    char path[1024];
    int version;
    int (*version_fn)(void);
    const char *(*version_str)(void);
    rd_kafka_conf_t *(*conf_new)(void);
    int (*conf_set)(rd_kafka_conf_t *, const char *, const char *, char *, size_t);
    void (*conf_destroy)(rd_kafka_conf_t *);
    void (*conf_set_opaque)(rd_kafka_conf_t *, void *);
    void (*conf_set_dr_msg_cb)(rd_kafka_conf_t *,
                               void (*)(rd_kafka_t *, const rk_message_t *, void *));
    void (*conf_set_error_cb)(rd_kafka_conf_t *, void (*)(rd_kafka_t *, int, const char *, void *));
    void (*conf_set_throttle_cb)(rd_kafka_conf_t *,
                                 void (*)(rd_kafka_t *, const char *, int32_t, int, void *));
    void (*conf_set_log_cb)(rd_kafka_conf_t *, void (*)(const rd_kafka_t *, int, const char *,
                                                         const char *));
    rd_kafka_t *(*new_)(int, rd_kafka_conf_t *, char *, size_t);
    void (*destroy)(rd_kafka_t *);
    rd_kafka_topic_t *(*topic_new)(rd_kafka_t *, const char *, rd_kafka_topic_conf_t *);
    void (*topic_destroy)(rd_kafka_topic_t *);
    int (*produce)(rd_kafka_topic_t *, int32_t, int, void *, size_t, const void *, size_t, void *);
    rk_err_t (*last_error)(void);
    int (*poll)(rd_kafka_t *, int);
    rk_err_t (*flush)(rd_kafka_t *, int);
    int (*outq_len)(rd_kafka_t *);
    rk_err_t (*purge)(rd_kafka_t *, int);
    const char *(*err2str)(rk_err_t);
    const char *(*err2name)(rk_err_t);
    rk_err_t (*fatal_error)(rd_kafka_t *, char *, size_t);
    rk_err_t (*metadata)(rd_kafka_t *, int, rd_kafka_topic_t *, const rk_metadata_t **, int);
    void (*metadata_destroy)(const rk_metadata_t *);
} rk;

static int find_rdkafka(struct dl_phdr_info *info, size_t size, void *data) {
    const char *name = info->dlpi_name;
    if (name && strstr(name, "librdkafka") && strlen(name) < sizeof rk.path) {
        strcpy(rk.path, name);
        return 1;
    }
    return 0;
}

/* 0 when librdkafka is ready; else -1 with rk.why saying why. Decided once per process. */
static int load_rdkafka(void) {
    if (rk.loaded)
        return rk.loaded > 0 ? 0 : -1;
    rk.loaded = -1;
    rk.path[0] = 0;
    dl_iterate_phdr(find_rdkafka, NULL);
    if (!rk.path[0]) {
        snprintf(rk.why, sizeof rk.why, "no librdkafka among the loaded libraries");
        return -1;
    }
    /* RTLD_NOLOAD: only the copy already in the process (confluent-kafka's), never another */
    void *h = dlopen(rk.path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h) {
        snprintf(rk.why, sizeof rk.why, "dlopen %s: %s", rk.path, dlerror());
        return -1;
    }
#define SYM(field, name)                                                                      \
    do {                                                                                      \
        *(void **)(&rk.field) = dlsym(h, name);                                               \
        if (!rk.field) {                                                                      \
            snprintf(rk.why, sizeof rk.why, "%s has no %s", rk.path, name);                   \
            return -1;                                                                        \
        }                                                                                     \
    } while (0)
    SYM(version_fn, "rd_kafka_version");
    SYM(version_str, "rd_kafka_version_str");
    rk.version = rk.version_fn();
    if (rk.version < RK_MIN_VERSION || rk.version >= RK_MAX_VERSION) {
        snprintf(rk.why, sizeof rk.why, "librdkafka %s is outside the supported 2.x",
                 rk.version_str());
        return -1;
    }
    SYM(conf_new, "rd_kafka_conf_new");
    SYM(conf_set, "rd_kafka_conf_set");
    SYM(conf_destroy, "rd_kafka_conf_destroy");
    SYM(conf_set_opaque, "rd_kafka_conf_set_opaque");
    SYM(conf_set_dr_msg_cb, "rd_kafka_conf_set_dr_msg_cb");
    SYM(conf_set_error_cb, "rd_kafka_conf_set_error_cb");
    SYM(conf_set_throttle_cb, "rd_kafka_conf_set_throttle_cb");
    SYM(conf_set_log_cb, "rd_kafka_conf_set_log_cb");
    SYM(new_, "rd_kafka_new");
    SYM(destroy, "rd_kafka_destroy");
    SYM(topic_new, "rd_kafka_topic_new");
    SYM(topic_destroy, "rd_kafka_topic_destroy");
    SYM(produce, "rd_kafka_produce");
    SYM(last_error, "rd_kafka_last_error");
    SYM(poll, "rd_kafka_poll");
    SYM(flush, "rd_kafka_flush");
    SYM(outq_len, "rd_kafka_outq_len");
    SYM(purge, "rd_kafka_purge");
    SYM(err2str, "rd_kafka_err2str");
    SYM(err2name, "rd_kafka_err2name");
    SYM(fatal_error, "rd_kafka_fatal_error");
    SYM(metadata, "rd_kafka_metadata");
    SYM(metadata_destroy, "rd_kafka_metadata_destroy");
#undef SYM
    rk.loaded = 1;
    return 0;
}

/* The delivery tally per partition: what was acknowledged (count, first and last offset) and
 * what failed definitely or has an unknown fate. */
typedef struct {
    int64_t delivered, first, last, failed, unknown;
} PartTally;

#define ERR_RING 64
typedef struct {
    rk_err_t code;
    int fatal;
    char reason[240];
} ErrEntry;

typedef struct {
    PyObject_HEAD
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt;
    /* delivery reports (served by poll/flush on the calling thread, GIL released: C only) */
    int64_t failed, unknown, delivered_reports;
    rk_err_t first_failed, first_unknown;
    int has_first_failed, has_first_unknown;
    PartTally *parts;
    int32_t nparts;
    unsigned char definite[512]; /* error code + 256 -> 1 when a definite failure */
    /* throttling, summed */
    int64_t throttle_ms, throttled;
    /* error_cb: the errors not yet taken by errors() (the oldest dropped past ERR_RING) */
    ErrEntry ring[ERR_RING];
    int ring_len;
} ProducerObject;

static int log_debug = 0;

static int is_definite(ProducerObject *p, rk_err_t err) {
    return err >= -256 && err < 256 && p->definite[err + 256];
}

static PartTally *part_at(ProducerObject *p, int32_t partition) {
    if (partition < 0 || partition > 1 << 20)
        return NULL;
    if (partition >= p->nparts) {
        int32_t n = p->nparts ? p->nparts : 16;
        while (n <= partition)
            n *= 2;
        PartTally *np = realloc(p->parts, (size_t)n * sizeof *np);
        if (!np)
            return NULL;
        for (int32_t i = p->nparts; i < n; i++)
            np[i] = (PartTally){0, -1, -1, 0, 0};
        p->parts = np;
        p->nparts = n;
    }
    return &p->parts[partition];
}

static void tally_error(ProducerObject *p, rk_err_t err, int32_t partition, int definite) {
    if (definite) {
        p->failed++;
        if (!p->has_first_failed) {
            p->first_failed = err;
            p->has_first_failed = 1;
        }
    } else {
        p->unknown++;
        if (!p->has_first_unknown) {
            p->first_unknown = err;
            p->has_first_unknown = 1;
        }
    }
    PartTally *t = part_at(p, partition);
    if (t) {
        if (definite)
            t->failed++;
        else
            t->unknown++;
    }
}

static void dr_cb(rd_kafka_t *r, const rk_message_t *m, void *opaque) {
    ProducerObject *p = opaque;
    if (m->err) {
        tally_error(p, m->err, m->partition, is_definite(p, m->err));
        return;
    }
    p->delivered_reports++;
    PartTally *t = part_at(p, m->partition);
    if (!t)
        return;
    int64_t off = m->offset < 0 ? -1 : m->offset; /* acks=0: no offset */
    if (t->delivered++ == 0)
        t->first = off;
    t->last = off;
}

static void error_cb(rd_kafka_t *r, int err, const char *reason, void *opaque) {
    ProducerObject *p = opaque;
    if (p->ring_len == ERR_RING) {
        memmove(p->ring, p->ring + 1, sizeof(ErrEntry) * (ERR_RING - 1));
        p->ring_len--;
    }
    ErrEntry *e = &p->ring[p->ring_len++];
    e->code = err;
    e->fatal = 0;
    if (err == RK_ERR_FATAL && p->rk) {
        char buf[sizeof e->reason];
        rk_err_t orig = rk.fatal_error(p->rk, buf, sizeof buf);
        if (orig) {
            e->code = orig;
            e->fatal = 1;
            snprintf(e->reason, sizeof e->reason, "%s", buf);
            return;
        }
    }
    snprintf(e->reason, sizeof e->reason, "%s", reason ? reason : "");
}

static void throttle_cb(rd_kafka_t *r, const char *broker, int32_t id, int ms, void *opaque) {
    ProducerObject *p = opaque;
    if (ms > 0) {
        p->throttle_ms += ms;
        p->throttled++;
    }
}

static void log_cb(const rd_kafka_t *r, int level, const char *fac, const char *buf) {
    if (log_debug)
        fprintf(stderr, "librdkafka: %s [%s] %s\n", fac, "kctl", buf);
}

static void Producer_dealloc(ProducerObject *self) {
    if (self->rkt)
        rk.topic_destroy(self->rkt);
    if (self->rk) {
        rd_kafka_t *r = self->rk;
        Py_BEGIN_ALLOW_THREADS
        rk.purge(r, RK_PURGE_F_QUEUE | RK_PURGE_F_INFLIGHT | RK_PURGE_F_NON_BLOCKING);
        rk.destroy(r);
        Py_END_ALLOW_THREADS
    }
    free(self->parts);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Producer(config, topic, definite, debug): config a list of (name, value) str pairs;
 * definite the error codes that mean a record is definitely not on the broker. Raises
 * RuntimeError (saying why) when librdkafka is not usable or refuses the configuration. */
static int Producer_init(ProducerObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *config, *definite;
    const char *topic;
    int debug = 0;
    if (!PyArg_ParseTuple(args, "O!sO|p", &PyList_Type, &config, &topic, &definite, &debug))
        return -1;
    if (self->rk) {
        PyErr_SetString(PyExc_RuntimeError, "Producer already initialised");
        return -1;
    }
    if (load_rdkafka() < 0) {
        PyErr_SetString(PyExc_RuntimeError, rk.why);
        return -1;
    }
    log_debug = debug;
    PyObject *seq = PySequence_Fast(definite, "definite must be a sequence of ints");
    if (!seq)
        return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        long code = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (code == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (code >= -256 && code < 256)
            self->definite[code + 256] = 1;
    }
    Py_DECREF(seq);
    char errstr[512];
    rd_kafka_conf_t *conf = rk.conf_new();
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(config); i++) {
        const char *name, *value;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(config, i), "ss", &name, &value)) {
            rk.conf_destroy(conf);
            return -1;
        }
        if (rk.conf_set(conf, name, value, errstr, sizeof errstr) != RK_CONF_OK) {
            rk.conf_destroy(conf);
            PyErr_Format(PyExc_RuntimeError, "%s", errstr);
            return -1;
        }
    }
    rk.conf_set_opaque(conf, self);
    rk.conf_set_dr_msg_cb(conf, dr_cb);
    rk.conf_set_error_cb(conf, error_cb);
    rk.conf_set_throttle_cb(conf, throttle_cb);
    rk.conf_set_log_cb(conf, log_cb);
    rd_kafka_t *r = rk.new_(RK_PRODUCER, conf, errstr, sizeof errstr);
    if (!r) {
        rk.conf_destroy(conf);
        PyErr_Format(PyExc_RuntimeError, "%s", errstr);
        return -1;
    }
    self->rk = r;
    self->rkt = rk.topic_new(r, topic, NULL);
    if (!self->rkt) {
        PyErr_Format(PyExc_RuntimeError, "topic %s: %s", topic, rk.err2str(rk.last_error()));
        return -1;
    }
    return 0;
}

#define NEED_RK(self)                                                                         \
    do {                                                                                      \
        if (!(self)->rk) {                                                                    \
            PyErr_SetString(PyExc_RuntimeError, "Producer not initialised");                  \
            return NULL;                                                                      \
        }                                                                                     \
    } while (0)

/* produce_lines(data, start, end, sep, limit=0) -> (stopped, records, nbytes, unkeyed, err)
 * The lines of data[start:end] (as produce_chunk walks them; with limit > 0 at most that many,
 * --rate's slices: err 0 and ``stopped`` before end), each handed to rd_kafka_produce
 * (copied; no partition: the configured partitioner) as a value, or with sep as KEY<sep>VALUE.
 * A line the client refuses (too large, ...) is counted as a definite failure, as handed over.
 * Stops at a line not handed over: err -184 (queue full: poll, then call again from
 * ``stopped``) or -150 (the producer hit a fatal error); err 0 when all went. */
static PyObject *Producer_produce_lines(ProducerObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, end;
    PyObject *sep;
    Py_ssize_t limit = 0;
    NEED_RK(self);
    if (!PyArg_ParseTuple(args, "y*nnO|n", &view, &start, &end, &sep, &limit))
        return NULL;
    const char *sbuf;
    Py_ssize_t slen;
    PyObject *result = NULL;
    if (chunk_args(sep, &view, start, end, &sbuf, &slen) < 0)
        goto done;
    char *d = view.buf;
    Py_ssize_t pos = start, records = 0, nbytes = 0, unkeyed = 0;
    rk_err_t stop = 0;
    while (pos < end && (limit <= 0 || records < limit)) {
        char *lb = d + pos;
        char *nl = memchr(lb, '\n', (size_t)(end - pos));
        Py_ssize_t ll = (nl ? nl - d : end) - pos;
        const char *at = NULL;
        if (sbuf)
            at = slen == 1 ? memchr(lb, sbuf[0], (size_t)ll)
                           : memmem(lb, (size_t)ll, sbuf, (size_t)slen);
        int r;
        Py_ssize_t size;
        if (at) {
            Py_ssize_t kl = at - lb;
            r = rk.produce(self->rkt, RK_PARTITION_UA, RK_MSG_F_COPY, (void *)(at + slen),
                           (size_t)(ll - kl - slen), lb, (size_t)kl, NULL);
            size = ll - slen;
        } else {
            r = rk.produce(self->rkt, RK_PARTITION_UA, RK_MSG_F_COPY, lb, (size_t)ll, NULL, 0,
                           NULL);
            size = ll;
        }
        if (r == -1) {
            rk_err_t err = rk.last_error();
            if (err == RK_ERR_QUEUE_FULL || err == RK_ERR_FATAL) {
                stop = err;
                break;
            }
            tally_error(self, err, RK_PARTITION_UA, 1); /* refused: never on the broker */
        }
        records++;
        unkeyed += sbuf && !at;
        nbytes += size;
        pos = nl ? (nl - d) + 1 : end;
    }
    result = Py_BuildValue("(nnnni)", pos, records, nbytes, unkeyed, stop);
done:
    PyBuffer_Release(&view);
    return result;
}

/* poll(timeout) -> events served (delivery reports, errors, throttle times) */
static PyObject *Producer_poll(ProducerObject *self, PyObject *args) {
    double timeout = 0;
    NEED_RK(self);
    if (!PyArg_ParseTuple(args, "|d", &timeout))
        return NULL;
    int n;
    int ms = timeout <= 0 ? 0 : (int)(timeout * 1000);
    Py_BEGIN_ALLOW_THREADS
    n = rk.poll(self->rk, ms);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(n);
}

/* flush(timeout) -> records still in the client (queued, in flight or their report unserved) */
static PyObject *Producer_flush(ProducerObject *self, PyObject *args) {
    double timeout = 0;
    NEED_RK(self);
    if (!PyArg_ParseTuple(args, "|d", &timeout))
        return NULL;
    int n;
    int ms = timeout <= 0 ? 0 : (int)(timeout * 1000);
    Py_BEGIN_ALLOW_THREADS
    rk.flush(self->rk, ms);
    n = rk.outq_len(self->rk);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(n);
}

static Py_ssize_t Producer_len(ProducerObject *self) {
    return self->rk ? rk.outq_len(self->rk) : 0;
}

/* purge(in_queue, in_flight, blocking): every purged record gets a delivery report */
static PyObject *Producer_purge(ProducerObject *self, PyObject *args) {
    int q = 1, f = 1, b = 1;
    NEED_RK(self);
    if (!PyArg_ParseTuple(args, "|ppp", &q, &f, &b))
        return NULL;
    int flags = (q ? RK_PURGE_F_QUEUE : 0) | (f ? RK_PURGE_F_INFLIGHT : 0) |
                (b ? 0 : RK_PURGE_F_NON_BLOCKING);
    rk_err_t err;
    Py_BEGIN_ALLOW_THREADS
    err = rk.purge(self->rk, flags);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(err);
}

/* metadata(topic or None, timeout) -> (err, [(topic, err, [partition ids])]) */
static PyObject *Producer_metadata(ProducerObject *self, PyObject *args) {
    PyObject *topic;
    double timeout = 0;
    NEED_RK(self);
    if (!PyArg_ParseTuple(args, "Od", &topic, &timeout))
        return NULL;
    rd_kafka_topic_t *t = NULL;
    if (topic != Py_None) {
        const char *name = PyUnicode_AsUTF8(topic);
        if (!name)
            return NULL;
        t = name[0] ? rk.topic_new(self->rk, name, NULL) : NULL;
        if (!t) /* as librdkafka answers a request it cannot make */
            return Py_BuildValue("(i[])", name[0] ? rk.last_error() : -186 /* _INVALID_ARG */);
    }
    const rk_metadata_t *md = NULL;
    rk_err_t err;
    int ms = timeout <= 0 ? 0 : (int)(timeout * 1000);
    rd_kafka_t *r = self->rk;
    Py_BEGIN_ALLOW_THREADS
    err = rk.metadata(r, t == NULL, t, &md, ms);
    Py_END_ALLOW_THREADS
    if (t)
        rk.topic_destroy(t);
    PyObject *topics = PyList_New(0);
    if (!topics)
        goto fail;
    if (!err && md) {
        for (int i = 0; i < md->topic_cnt; i++) {
            const rk_md_topic_t *mt = &md->topics[i];
            PyObject *ids = PyList_New(mt->partition_cnt);
            if (!ids)
                goto fail;
            for (int j = 0; j < mt->partition_cnt; j++)
                PyList_SET_ITEM(ids, j, PyLong_FromLong(mt->partitions[j].id));
            PyObject *row = Py_BuildValue("(siN)", mt->topic, mt->err, ids);
            if (!row || PyList_Append(topics, row) < 0) {
                Py_XDECREF(row);
                goto fail;
            }
            Py_DECREF(row);
        }
    }
    if (md)
        rk.metadata_destroy(md);
    return Py_BuildValue("(iN)", err, topics);
fail:
    if (md)
        rk.metadata_destroy(md);
    Py_XDECREF(topics);
    return NULL;
}

/* tally() -> {"failed", "unknown", "first_failed", "first_unknown" (codes or None),
 * "partitions": {p: [failed, unknown]}, "spans": {p: [delivered, first, last]},
 * "throttle_ms", "throttled"} */
static PyObject *Producer_tally(ProducerObject *self, PyObject *unused) {
    PyObject *parts = PyDict_New(), *spans = PyDict_New(), *res = NULL;
    if (!parts || !spans)
        goto done;
    for (int32_t i = 0; i < self->nparts; i++) {
        PartTally *t = &self->parts[i];
        PyObject *k = PyLong_FromLong(i), *v;
        if (!k)
            goto done;
        if (t->failed || t->unknown) {
            v = Py_BuildValue("[LL]", (long long)t->failed, (long long)t->unknown);
            if (!v || PyDict_SetItem(parts, k, v) < 0) {
                Py_XDECREF(v);
                Py_DECREF(k);
                goto done;
            }
            Py_DECREF(v);
        }
        if (t->delivered) {
            v = Py_BuildValue("[LLL]", (long long)t->delivered, (long long)t->first,
                              (long long)t->last);
            if (!v || PyDict_SetItem(spans, k, v) < 0) {
                Py_XDECREF(v);
                Py_DECREF(k);
                goto done;
            }
            Py_DECREF(v);
        }
        Py_DECREF(k);
    }
    PyObject *ff = self->has_first_failed ? PyLong_FromLong(self->first_failed) : Py_NewRef(Py_None);
    PyObject *fu =
        self->has_first_unknown ? PyLong_FromLong(self->first_unknown) : Py_NewRef(Py_None);
    res = Py_BuildValue("{s:L,s:L,s:N,s:N,s:O,s:O,s:L,s:L}", "failed", (long long)self->failed,
                        "unknown", (long long)self->unknown, "first_failed", ff, "first_unknown",
                        fu, "partitions", parts, "spans", spans, "throttle_ms",
                        (long long)self->throttle_ms, "throttled", (long long)self->throttled);
done:
    Py_XDECREF(parts);
    Py_XDECREF(spans);
    return res;
}

/* errors() -> [(code, reason, fatal)] reported by librdkafka since the last call */
static PyObject *Producer_errors(ProducerObject *self, PyObject *unused) {
    PyObject *out = PyList_New(self->ring_len);
    if (!out)
        return NULL;
    for (int i = 0; i < self->ring_len; i++) {
        ErrEntry *e = &self->ring[i];
        PyObject *row = Py_BuildValue("(isO)", e->code, e->reason, e->fatal ? Py_True : Py_False);
        if (!row) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, row);
    }
    self->ring_len = 0;
    return out;
}

/* fatal() -> (code, reason) of the producer's fatal error, or None */
static PyObject *Producer_fatal(ProducerObject *self, PyObject *unused) {
    NEED_RK(self);
    char buf[512];
    rk_err_t err = rk.fatal_error(self->rk, buf, sizeof buf);
    if (!err)
        Py_RETURN_NONE;
    return Py_BuildValue("(is)", err, buf);
}

static PyObject *Producer_errors_in(ProducerObject *self, PyObject *unused) {
    return PyLong_FromLongLong(self->failed + self->unknown);
}

static PyMethodDef Producer_methods[] = {
    {"produce_lines", (PyCFunction)Producer_produce_lines, METH_VARARGS,
     "produce_lines(data, start, end, sep, limit=0) -> (stopped, records, nbytes, unkeyed, "
     "err)"},
    {"poll", (PyCFunction)Producer_poll, METH_VARARGS, "poll(timeout=0) -> events served"},
    {"flush", (PyCFunction)Producer_flush, METH_VARARGS, "flush(timeout=0) -> records left"},
    {"purge", (PyCFunction)Producer_purge, METH_VARARGS,
     "purge(in_queue=True, in_flight=True, blocking=True) -> error code"},
    {"metadata", (PyCFunction)Producer_metadata, METH_VARARGS,
     "metadata(topic, timeout) -> (err, [(topic, err, [partition ids])])"},
    {"tally", (PyCFunction)Producer_tally, METH_NOARGS, "tally() -> the delivery tally"},
    {"errors", (PyCFunction)Producer_errors, METH_NOARGS,
     "errors() -> [(code, reason, fatal)] since the last call"},
    {"error_count", (PyCFunction)Producer_errors_in, METH_NOARGS,
     "error_count() -> records failed or unknown so far"},
    {"fatal", (PyCFunction)Producer_fatal, METH_NOARGS, "fatal() -> (code, reason) or None"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Producer_seq = {.sq_length = (lenfunc)Producer_len};

static PyTypeObject ProducerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kctl._native.Producer",
    .tp_basicsize = sizeof(ProducerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Producer_init,
    .tp_dealloc = (destructor)Producer_dealloc,
    .tp_methods = Producer_methods,
    .tp_as_sequence = &Producer_seq,
    .tp_doc = "kctl's own producer on the librdkafka confluent-kafka loaded.",
};

/* rdkafka() -> (path, version string) of the librdkafka in use; RuntimeError saying why not */
static PyObject *rdkafka(PyObject *self, PyObject *unused) {
    if (load_rdkafka() < 0) {
        PyErr_SetString(PyExc_RuntimeError, rk.why);
        return NULL;
    }
    return Py_BuildValue("(ss)", rk.path, rk.version_str());
}

static PyMethodDef methods[] = {
    {"records_json", (PyCFunction)(void (*)(void))records_json, METH_VARARGS | METH_KEYWORDS,
     "records_json(data, base_offset, first_ts, count, base_seq, text=None): see "
     "kctl.logfmt.fast.records_json."},
    {"jsonl_block", jsonl_block, METH_VARARGS,
     "jsonl_block(msgs, types): see kctl.formatters.stream.jsonl_block."},
    {"produce_chunk", produce_chunk, METH_VARARGS,
     "produce_chunk(produce, topic, data, start, end, sep, catch) -> (stopped, records, nbytes, "
     "unkeyed)."},
    {"rdkafka", rdkafka, METH_NOARGS,
     "rdkafka() -> (path, version) of the librdkafka kctl's Producer drives."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kctl._native", "kctl's per-record hot loops in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&ProducerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddObjectRef(m, "Producer", (PyObject *)&ProducerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

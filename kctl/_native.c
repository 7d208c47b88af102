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
 *       produce() call per line.
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
    if (parse_sep(sep, &sbuf, &slen) < 0)
        goto done;
    if (start < 0 || end > view.len || start > end) {
        PyErr_SetString(PyExc_ValueError, "start and end must lie within data");
        goto done;
    }
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

static PyMethodDef methods[] = {
    {"records_json", (PyCFunction)(void (*)(void))records_json, METH_VARARGS | METH_KEYWORDS,
     "records_json(data, base_offset, first_ts, count, base_seq, text=None): see "
     "kctl.logfmt.fast.records_json."},
    {"jsonl_block", jsonl_block, METH_VARARGS,
     "jsonl_block(msgs, types): see kctl.formatters.stream.jsonl_block."},
    {"produce_chunk", produce_chunk, METH_VARARGS,
     "produce_chunk(produce, topic, data, start, end, sep, catch) -> (stopped, records, nbytes, "
     "unkeyed)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kctl._native", "kctl's per-record hot loops in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }

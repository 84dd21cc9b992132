/* rldp.shared._string_index: exact lookup of Python strings among an attribute's values.

   An optional accelerator of Attribute.encode_compact (shared/attributes.py) for lists,
   tuples and object arrays of str; without a C compiler the package falls back to a dict
   lookup per value, with the same results.

   Why C: a Python-level lookup (dict.__getitem__ through map) costs ~40 ns per value,
   most of it in computing the SipHash of every freshly made str (their hash is not cached
   yet) and in the interpreter's call machinery. Here each value costs a read of its header,
   its first and last 8 bytes, and one probe of a small table.

   Keys. A string's key is its byte length, kind and three words of its data (its first 16
   and last 8 bytes, see key_of), so for strings of at most 24 bytes the key holds every byte. CPython keeps every str in canonical form (PEP 393: the narrowest kind
   that holds it), so two equal strings have equal kind, length and bytes. A lookup compares
   the key exactly and, for values longer than 24 bytes, the bytes in between: a value is
   found only if it is equal to an attribute value, never merely because it hashes alike.

   The table is open addressing with at least twice as many slots as values, each slot holding
   its value's key, and a hash multiplier chosen at construction so that no two values share a
   first slot (tried up to 64 multipliers):
   the probe of a known value is one step, which keeps the loop free of mispredicted
   branches when values alternate at random. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Items ahead whose str header is prefetched: freshly made strings are scattered in memory,
   and reading them one after another would wait on each. */
#define PREFETCH 32

typedef struct {
    uint64_t first, mid, last; /* bytes [0, 8), [8, 16) and the last 8 (fewer if shorter; see key_of) */
    uint64_t meta;             /* nbytes << 3 | kind */
} Key;

typedef struct {
    Key key;
    int64_t index; /* the value's position, or -1 for an empty slot */
} Slot;

typedef struct {
    PyObject_HEAD
    PyObject *values; /* tuple of exact str */
    Slot *slots;      /* open addressing; each slot holds its value's key (one read per probe) */
    uint64_t mask;    /* slots − 1 (a power of two) */
    uint64_t multiplier;
    int shift;        /* 64 − log2(slots): the hash's top bits pick the first slot */
} StringIndex;

/* word(d, off, len): the little-endian integer of bytes [off, off + len) of d (len ≤ 8). */
static inline uint64_t word(const unsigned char *d, Py_ssize_t off, Py_ssize_t len)
{
    uint64_t w = 0;
    for (Py_ssize_t i = 0; i < len; i++) w |= (uint64_t)d[off + i] << (8 * i);
    return w;
}

/* The key of a str whose data is d, of nbytes bytes: with m = min(nbytes, 8),
       first = word(0, m), mid = word(min(nbytes, 16) - m, m), last = word(nbytes - m, m),
   so for nbytes ≤ 24 the key holds every byte (for nbytes ≤ 8 the three words are the whole
   string). Compact strings (every exact str but legacy ones on Python 3.11) keep their data
   inside the object after a header of at least 40 bytes, so the 8 bytes that end at
   off + m are inside the object even when off + m < 8: one load and a shift then give
   word(off, m) with no branch on the length (a branch that mispredicts whenever values of
   different lengths alternate, ~3 ns a value). Other strings take the byte loop. */
static inline Key key_of(PyObject *s)
{
    Key k;
    const unsigned char *d = PyUnicode_DATA(s);
    const int kind = PyUnicode_KIND(s);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(s) * kind, m = n < 8 ? n : 8, m2 = n < 16 ? n : 16;
    k.meta = (uint64_t)n << 3 | (uint64_t)kind;
#if PY_LITTLE_ENDIAN
    if (PyUnicode_IS_COMPACT(s)) {
        const unsigned int drop = (unsigned int)(4 * (8 - m)); /* two shifts: 64 would be undefined */
        uint64_t w;
        memcpy(&w, d + m - 8, 8);
        k.first = (w >> drop) >> drop;
        memcpy(&w, d + m2 - 8, 8);
        k.mid = (w >> drop) >> drop;
        memcpy(&w, d + n - 8, 8);
        k.last = (w >> drop) >> drop;
        return k;
    }
#endif
    k.first = word(d, 0, m);
    k.mid = word(d, m2 - m, m);
    k.last = word(d, n - m, m);
    return k;
}

static inline uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

/* The first slot: a multiplicative hash of the key (its top bits). */
static inline uint64_t first_slot(const StringIndex *self, const Key *k)
{
    return ((k->first ^ rotl(k->mid, 21) ^ rotl(k->last, 42) ^ k->meta) * self->multiplier) >> self->shift;
}

/* Exact equality of a string (key ks, data d) and the value v (key kv). */
static inline int same(const Key *ks, const Key *kv, const void *d, PyObject *v)
{
    /* | rather than ||: one well-predicted branch instead of four */
    if (((ks->first ^ kv->first) | (ks->mid ^ kv->mid) | (ks->last ^ kv->last) | (ks->meta ^ kv->meta)) != 0) return 0;
    const Py_ssize_t n = (Py_ssize_t)(ks->meta >> 3);
    if (n <= 24) return 1; /* the key holds every byte */
    return memcmp((const char *)d + 16, (const char *)PyUnicode_DATA(v) + 16, (size_t)(n - 24)) == 0;
}

/* The value whose key is ks (data d: the string's bytes in its kind), or -1. */
static inline Py_ssize_t find_key(const StringIndex *self, const Key *ks, const void *d)
{
    uint64_t j = first_slot(self, ks);
    for (;;) {
        const Slot *e = &self->slots[j];
        if (e->index < 0) return -1;
        if (same(ks, &e->key, d, PyTuple_GET_ITEM(self->values, e->index))) return (Py_ssize_t)e->index;
        j = (j + 1) & self->mask;
    }
}

/* -1 if s is not one of the values (or, for a legacy string on Python 3.11, cannot be read;
   the caller's general path then handles it). */
static inline Py_ssize_t find(const StringIndex *self, PyObject *s)
{
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(s)) return -1;
#endif
    Key ks = key_of(s);
    return find_key(self, &ks, PyUnicode_DATA(s));
}

static void si_dealloc(StringIndex *self)
{
    Py_XDECREF(self->values);
    PyMem_Free(self->slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int si_init(StringIndex *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"values", NULL};
    PyObject *values;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!:StringIndex", names, &PyTuple_Type, &values)) return -1;
    if (self->values != NULL) {
        PyErr_SetString(PyExc_TypeError, "StringIndex is immutable: it is initialised once");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(values);
    if (n > (Py_ssize_t)(INT32_MAX / 4)) {
        PyErr_Format(PyExc_ValueError, "StringIndex holds at most %d values; got %zd", INT32_MAX / 4, n);
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_CheckExact(PyTuple_GET_ITEM(values, k)) && PyUnicode_READY(PyTuple_GET_ITEM(values, k)) < 0) return -1;
#endif
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(values, k))) {
            PyErr_Format(PyExc_TypeError, "values[%zd] must be a str, got %s", k, Py_TYPE(PyTuple_GET_ITEM(values, k))->tp_name);
            return -1;
        }
    }
    uint64_t size = 16;
    int bits = 4;
    while (size < (uint64_t)(2 * n + 1)) {
        size <<= 1;
        bits++;
    }
    self->slots = PyMem_Malloc((size_t)size * sizeof(Slot));
    if (self->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_INCREF(values);
    self->values = values;
    self->mask = size - 1;
    self->shift = 64 - bits;
    for (uint64_t seed = 0;; seed++) {
        int collided = 0;
        self->multiplier = UINT64_C(0x9E3779B97F4A7C15) + (seed << 17) * 2; /* odd for every seed */
        for (uint64_t j = 0; j < size; j++) self->slots[j].index = -1;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *v = PyTuple_GET_ITEM(values, k);
            if (find(self, v) >= 0) {
                PyErr_Format(PyExc_ValueError, "values must be distinct; %R is listed twice", v);
                return -1;
            }
            Key key = key_of(v);
            uint64_t j = first_slot(self, &key);
            collided |= self->slots[j].index >= 0;
            while (self->slots[j].index >= 0) j = (j + 1) & self->mask;
            self->slots[j].key = key;
            self->slots[j].index = k;
        }
        if (!collided || seed == 63) break; /* a collision only costs a longer probe */
    }
    return 0;
}

/* numpy.ndarray, looked up when the module is loaded: only a real ndarray's interface is
   trusted with a data pointer (another object could publish any address). */
static PyObject *ndarray_type = NULL;

/* The items of a list, a tuple or a 1-D object ndarray (read through __array_interface__,
   so no numpy headers are needed): a pointer to the first and the stride in pointers. */
static int items_of(PyObject *items, PyObject ***first, Py_ssize_t *n, Py_ssize_t *stride, PyObject **owner)
{
    *owner = NULL;
    if (PyList_CheckExact(items) || PyTuple_CheckExact(items)) {
        *first = PySequence_Fast_ITEMS(items);
        *n = PySequence_Fast_GET_SIZE(items);
        *stride = 1;
        return 0;
    }
    int is_array = PyObject_IsInstance(items, ndarray_type);
    if (is_array < 0) return -1;
    PyObject *iface = is_array ? PyObject_GetAttrString(items, "__array_interface__") : NULL;
    if (iface == NULL || !PyDict_Check(iface)) {
        Py_XDECREF(iface);
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "items must be a list, a tuple or a 1-D object array");
        return -1;
    }
    PyObject *typestr = PyDict_GetItemString(iface, "typestr");
    PyObject *shape = PyDict_GetItemString(iface, "shape");
    PyObject *strides = PyDict_GetItemString(iface, "strides");
    PyObject *data = PyDict_GetItemString(iface, "data");
    int ok = typestr && PyUnicode_Check(typestr) && PyUnicode_CompareWithASCIIString(typestr, "|O") == 0 && shape &&
             PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == 1 && data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) == 2;
    Py_ssize_t step = sizeof(PyObject *);
    if (ok && strides && strides != Py_None) {
        ok = PyTuple_Check(strides) && PyTuple_GET_SIZE(strides) == 1;
        if (ok) step = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, 0));
    }
    if (ok) {
        *n = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 0));
        *first = (PyObject **)PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    }
    Py_DECREF(iface);
    if (PyErr_Occurred()) return -1;
    if (!ok || step % (Py_ssize_t)sizeof(PyObject *) != 0 || *n < 0) {
        PyErr_SetString(PyExc_TypeError, "items must be a list, a tuple or a 1-D object array");
        return -1;
    }
    *stride = step / (Py_ssize_t)sizeof(PyObject *);
    Py_INCREF(items); /* the array keeps its objects alive while they are read */
    *owner = items;
    return 0;
}

/* The loop of encode and encode_scaled: out[i] = code (uint8 or int64), or for
   scaled, out[i] = code·stride (+= with accumulate). -1, or the first item not found. */
#define WRITE_UINT8 0
#define WRITE_INT64 1
#define WRITE_SCALED 2
#define ADD_SCALED 3

/* Inlined into one copy per mode (see encode_mode): no branch on the mode per item. */
static inline __attribute__((always_inline)) Py_ssize_t encode_loop(const StringIndex *self, PyObject **first,
                                                                    Py_ssize_t n, Py_ssize_t step, void *out,
                                                                    const int mode, int64_t stride)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + PREFETCH < n) {
            const char *ahead = (const char *)first[(i + PREFETCH) * step];
            __builtin_prefetch(ahead);
            __builtin_prefetch(ahead + 64); /* a str of more than ~16 bytes spans two lines */
        }
        PyObject *s = first[i * step];
        Py_ssize_t k = s != NULL && PyUnicode_CheckExact(s) ? find(self, s) : -1; /* NULL: an unset object slot */
        if (k < 0) return i;
        if (mode == WRITE_UINT8)
            ((uint8_t *)out)[i] = (uint8_t)k;
        else if (mode == WRITE_INT64)
            ((int64_t *)out)[i] = (int64_t)k;
        else if (mode == WRITE_SCALED)
            ((int64_t *)out)[i] = (int64_t)k * stride;
        else
            ((int64_t *)out)[i] += (int64_t)k * stride;
    }
    return -1;
}

static Py_ssize_t encode_mode(const StringIndex *self, PyObject **first, Py_ssize_t n, Py_ssize_t step, void *out,
                              int mode, int64_t stride)
{
    switch (mode) {
    case WRITE_UINT8: return encode_loop(self, first, n, step, out, WRITE_UINT8, stride);
    case WRITE_INT64: return encode_loop(self, first, n, step, out, WRITE_INT64, stride);
    case WRITE_SCALED: return encode_loop(self, first, n, step, out, WRITE_SCALED, stride);
    default: return encode_loop(self, first, n, step, out, ADD_SCALED, stride);
    }
}

/* Shared by encode and encode_scaled: parse, check, run the loop. */
static PyObject *encode_common(StringIndex *self, PyObject *items, Py_buffer *out, int scaled, int64_t stride,
                               int accumulate)
{
    PyObject *owner, **first;
    Py_ssize_t n, step;
    if (self->values == NULL) {
        PyErr_SetString(PyExc_TypeError, "StringIndex was not initialised");
        return NULL;
    }
    if (items_of(items, &first, &n, &step, &owner) < 0) return NULL;
    PyObject *result = NULL;
    const int ok_size = scaled ? out->itemsize == 8 : (out->itemsize == 1 || out->itemsize == 8);
    if (!ok_size || out->len != n * out->itemsize || !PyBuffer_IsContiguous(out, 'C')) {
        PyErr_Format(PyExc_ValueError, "out must be a contiguous buffer of %zd %s codes", n,
                     scaled ? "int64" : "uint8 or int64");
    } else if (out->itemsize == 1 && PyTuple_GET_SIZE(self->values) > 256) {
        PyErr_SetString(PyExc_ValueError, "uint8 codes hold at most 256 values");
    } else {
        const int mode = scaled ? (accumulate ? ADD_SCALED : WRITE_SCALED) : (out->itemsize == 1 ? WRITE_UINT8 : WRITE_INT64);
        result = PyLong_FromSsize_t(encode_mode(self, first, n, step, out->buf, mode, stride));
    }
    Py_XDECREF(owner);
    return result;
}

PyDoc_STRVAR(si_encode_doc,
             "encode(items, out) -> int\n\n"
             "Write the index of every item among the values into ``out`` (a writable buffer of\n"
             "uint8 or int64, one per item). Returns -1, or the position of the first item that is\n"
             "not a str equal to one of the values (``out`` is then partly written).");

static PyObject *si_encode(StringIndex *self, PyObject *args)
{
    PyObject *items, *result;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "Ow*:encode", &items, &out)) return NULL;
    result = encode_common(self, items, &out, 0, 0, 0);
    PyBuffer_Release(&out);
    return result;
}

PyDoc_STRVAR(si_encode_scaled_doc,
             "encode_scaled(items, out, stride, accumulate) -> int\n\n"
             "out[i] = index·stride, or out[i] += index·stride with ``accumulate`` (``out``: int64):\n"
             "one column of a mixed-radix index in one pass. Returns as encode does.");

static PyObject *si_encode_scaled(StringIndex *self, PyObject *args)
{
    PyObject *items, *result;
    Py_buffer out;
    long long stride;
    int accumulate;
    if (!PyArg_ParseTuple(args, "Ow*Lp:encode_scaled", &items, &out, &stride, &accumulate)) return NULL;
    result = encode_common(self, items, &out, 1, (int64_t)stride, accumulate);
    PyBuffer_Release(&out);
    return result;
}

/* Widest fixed-width row encode_ucs4 takes (code points): its canonical bytes fit a stack buffer. */
#define MAX_UCS4_WIDTH 64

PyDoc_STRVAR(si_encode_ucs4_doc,
             "encode_ucs4(units, width, out) -> int\n\n"
             "Codes of the rows of a numpy 'U' array given as its native UCS4 code units (a\n"
             "contiguous buffer of n·width uint32; a row's value is its units up to the last non-NUL,\n"
             "as numpy reads it), into ``out`` (uint8 or int64, one per row). Each row is put in the\n"
             "canonical form of a str (the narrowest kind that holds it) and looked up as encode does.\n"
             "Returns -1, or the first row that is not one of the values. width ≤ 64.");

static PyObject *si_encode_ucs4(StringIndex *self, PyObject *args)
{
    Py_buffer ub, out;
    Py_ssize_t width;
    if (self->values == NULL) {
        PyErr_SetString(PyExc_TypeError, "StringIndex was not initialised");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*nw*:encode_ucs4", &ub, &width, &out)) return NULL;
    PyObject *result = NULL;
    const Py_ssize_t n = width > 0 ? ub.len / (4 * width) : 0;
    if (width < 1 || width > MAX_UCS4_WIDTH || ub.len != n * 4 * width || !PyBuffer_IsContiguous(&ub, 'C')) {
        PyErr_Format(PyExc_ValueError, "units must be a contiguous buffer of rows of 1 to %d UCS4 code units", MAX_UCS4_WIDTH);
    } else if ((out.itemsize != 1 && out.itemsize != 8) || out.len != n * out.itemsize || !PyBuffer_IsContiguous(&out, 'C')) {
        PyErr_Format(PyExc_ValueError, "out must be a contiguous buffer of %zd uint8 or int64 codes", n);
    } else if (out.itemsize == 1 && PyTuple_GET_SIZE(self->values) > 256) {
        PyErr_SetString(PyExc_ValueError, "uint8 codes hold at most 256 values");
    } else {
        const uint32_t *units = ub.buf;
        unsigned char row[4 * MAX_UCS4_WIDTH];
        Py_ssize_t bad = -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            const uint32_t *u = units + i * width;
            Py_ssize_t len = width;
            while (len > 0 && u[len - 1] == 0) len--; /* numpy's value: trailing NULs dropped */
            uint32_t any = 0;
            for (Py_ssize_t k = 0; k < len; k++) any |= u[k];
            /* The narrowest kind that holds every unit: the str's canonical form (PEP 393). */
            const int kind = any < 0x100 ? 1 : any < 0x10000 ? 2 : 4;
            for (Py_ssize_t k = 0; k < len; k++) {
                if (kind == 1) {
                    row[k] = (unsigned char)u[k];
                } else if (kind == 2) {
                    const uint16_t c = (uint16_t)u[k];
                    memcpy(row + 2 * k, &c, 2); /* native order, as in a str */
                } else {
                    memcpy(row + 4 * k, u + k, 4);
                }
            }
            const Py_ssize_t nb = len * kind, m = nb < 8 ? nb : 8, m2 = nb < 16 ? nb : 16;
            Key key = {word(row, 0, m), word(row, m2 - m, m), word(row, nb - m, m), (uint64_t)nb << 3 | (uint64_t)kind};
            const Py_ssize_t k = find_key(self, &key, row);
            if (k < 0) {
                bad = i;
                break;
            }
            if (out.itemsize == 1)
                ((uint8_t *)out.buf)[i] = (uint8_t)k;
            else
                ((int64_t *)out.buf)[i] = (int64_t)k;
        }
        result = PyLong_FromSsize_t(bad);
    }
    PyBuffer_Release(&ub);
    PyBuffer_Release(&out);
    return result;
}

/* Pickled (and copied) as its values: an Alphabet holding one can be sent to another process. */
static PyObject *si_reduce(StringIndex *self, PyObject *Py_UNUSED(ignored))
{
    if (self->values == NULL) {
        PyErr_SetString(PyExc_TypeError, "StringIndex was not initialised");
        return NULL;
    }
    return Py_BuildValue("O(O)", (PyObject *)Py_TYPE(self), self->values);
}

/* For tests: the key by the branch-free loads and by the byte loop (they must agree). */
static PyObject *keys_of(PyObject *Py_UNUSED(module), PyObject *s)
{
    if (!PyUnicode_CheckExact(s)) {
        PyErr_SetString(PyExc_TypeError, "_keys takes a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) return NULL;
#endif
    Key fast = key_of(s);
    const unsigned char *d = PyUnicode_DATA(s);
    const Py_ssize_t n = (Py_ssize_t)(fast.meta >> 3), m = n < 8 ? n : 8, m2 = n < 16 ? n : 16;
    return Py_BuildValue("(KKKn)(KKKn)", (unsigned long long)fast.first, (unsigned long long)fast.mid,
                         (unsigned long long)fast.last, n, (unsigned long long)word(d, 0, m),
                         (unsigned long long)word(d, m2 - m, m), (unsigned long long)word(d, n - m, m), n);
}

static PyMethodDef module_methods[] = {
    {"_keys", keys_of, METH_O, "For tests: a str's key by the branch-free loads and by the byte loop."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef si_methods[] = {
    {"encode", (PyCFunction)si_encode, METH_VARARGS, si_encode_doc},
    {"encode_scaled", (PyCFunction)si_encode_scaled, METH_VARARGS, si_encode_scaled_doc},
    {"encode_ucs4", (PyCFunction)si_encode_ucs4, METH_VARARGS, si_encode_ucs4_doc},
    {"__reduce__", (PyCFunction)si_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StringIndexType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rldp.shared._string_index.StringIndex",
    .tp_basicsize = sizeof(StringIndex),
    .tp_dealloc = (destructor)si_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = PyDoc_STR("StringIndex(values: tuple[str, ...]): exact lookup of str among the values"),
    .tp_methods = si_methods,
    .tp_init = (initproc)si_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_string_index", "Exact lookup of Python strings among an attribute's values.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__string_index(void)
{
    if (ndarray_type == NULL) {
        PyObject *numpy = PyImport_ImportModule("numpy");
        if (numpy == NULL) return NULL;
        ndarray_type = PyObject_GetAttrString(numpy, "ndarray");
        Py_DECREF(numpy);
        if (ndarray_type == NULL) return NULL;
    }
    if (PyType_Ready(&StringIndexType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&StringIndexType);
    if (PyModule_AddObject(m, "StringIndex", (PyObject *)&StringIndexType) < 0) {
        Py_DECREF(&StringIndexType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

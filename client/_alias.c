/* rldp.client._alias: the alias-table lookup of rldp.client.alias in one C loop.

   An optional accelerator of AliasTable.sample_chunk (client/alias.py): the same function
   of the same 53-bit words, so the same outputs, byte for byte (a test compares them); the
   package falls back to numpy without a C compiler.

   Why C: at |Y| = 4,000 the table is 128 MB and every record reads one random entry of it.
   numpy's gather issues the reads one after another and the passes around it (shifts,
   masks, the choice between bucket and alias) cost as much again; here the loop prefetches
   the entry of the record PREFETCH ahead, so several reads from memory are in flight, and
   does the arithmetic in registers (bench/bench_scale.py --only=client). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Records ahead whose table entry is prefetched: enough reads in flight to cover a trip to
   memory (measured best at 32 on 2-core x86-64; 16 gives most of it). */
#define PREFETCH 32

PyDoc_STRVAR(alias_sample_doc,
             "alias_sample(table, xs, words, out, bits, alias_bits, shift) -> int\n\n"
             "out[i] = y for record xs[i] and u = words[i] >> shift (53 bits): the entry e =\n"
             "table[xs[i] << bits | u >> (53 - bits)] holds prob above an alias of alias_bits bits;\n"
             "y is the bucket if u's low 53 - bits bits are below prob, else the alias.\n"
             "table: uint64; xs, out: int64; words: uint64, all contiguous, xs/words/out of one\n"
             "length. Returns -1, or the position of the first record whose entry is outside the\n"
             "table (nothing is read there; out is then partly written).");

static PyObject *alias_sample(PyObject *self, PyObject *args)
{
    Py_buffer tb, xb, wb, ob;
    int bits, alias_bits, shift;
    if (!PyArg_ParseTuple(args, "y*y*y*w*iii:alias_sample", &tb, &xb, &wb, &ob, &bits, &alias_bits, &shift)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = xb.len / 8;
    if (tb.itemsize != 8 || xb.itemsize != 8 || wb.itemsize != 8 || ob.itemsize != 8 || wb.len != xb.len || ob.len != xb.len ||
        !PyBuffer_IsContiguous(&tb, 'C') || !PyBuffer_IsContiguous(&xb, 'C') || !PyBuffer_IsContiguous(&wb, 'C') ||
        !PyBuffer_IsContiguous(&ob, 'C')) {
        PyErr_SetString(PyExc_ValueError, "alias_sample needs contiguous 8-byte arrays; xs, words and out of one length");
    } else if (bits < 1 || bits > 52 || alias_bits < 1 || alias_bits > 32 || shift < 0 || shift > 11) {
        PyErr_Format(PyExc_ValueError, "alias_sample: bits %d, alias_bits %d or shift %d out of range", bits, alias_bits, shift);
    } else {
        const uint64_t *table = tb.buf, *words = wb.buf;
        const int64_t *xs = xb.buf;
        int64_t *out = ob.buf;
        const uint64_t size = (uint64_t)(tb.len / 8), low = (UINT64_C(1) << (53 - bits)) - 1,
                       alias_mask = (UINT64_C(1) << alias_bits) - 1;
        const int top = 53 - bits;
        const uint64_t rows = size >> bits;
        Py_ssize_t bad = -1;
        Py_BEGIN_ALLOW_THREADS;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i + PREFETCH < n) {
                uint64_t ahead = ((uint64_t)xs[i + PREFETCH] << bits) | ((words[i + PREFETCH] >> shift) >> top);
                if (ahead < size) __builtin_prefetch(table + ahead);
            }
            const uint64_t u = words[i] >> shift;
            const uint64_t bucket = u >> top;
            if ((uint64_t)xs[i] >= rows) { /* also a negative x (as uint64: huge) */
                bad = i;
                break;
            }
            const uint64_t entry = ((uint64_t)xs[i] << bits) | bucket;
            if (entry >= size) {
                bad = i;
                break;
            }
            const uint64_t e = table[entry];
            out[i] = (int64_t)((u & low) < (e >> alias_bits) ? bucket : (e & alias_mask));
        }
        Py_END_ALLOW_THREADS;
        result = PyLong_FromSsize_t(bad);
    }
    PyBuffer_Release(&tb);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&ob);
    return result;
}

/* Vose's construction on one column's masses m (B buckets, summing to B·cap), exactly as
   rldp.client.alias._vose does it for all columns at once: the buckets below cap ("small"),
   in index order, are filled from the donors (at least cap), in index order; a donor that
   drops below cap is filled next, from the following donor. m becomes prob. Returns 0, or
   -1 if the masses do not sum to B·cap (an unfilled bucket not holding exactly cap). */
static int vose_column(int64_t *m, int32_t *alias, int32_t *small, int32_t *large, Py_ssize_t buckets, int64_t cap)
{
    Py_ssize_t n_small = 0, n_large = 0;
    for (Py_ssize_t i = 0; i < buckets; i++) {
        alias[i] = (int32_t)i;
        if (m[i] < cap)
            small[n_small++] = (int32_t)i;
        else
            large[n_large++] = (int32_t)i;
    }
    Py_ssize_t si = 0, li = 0;
    int32_t pending = -1;
    while (li < n_large && (pending >= 0 || si < n_small)) {
        const int32_t cur = pending >= 0 ? pending : small[si++];
        const int32_t donor = large[li];
        alias[cur] = donor;
        m[donor] -= cap - m[cur];
        if (m[donor] < cap) {
            pending = donor;
            li++;
        } else {
            pending = -1;
        }
    }
    for (Py_ssize_t i = 0; i < buckets; i++)
        if (alias[i] == i && m[i] != cap) return -1;
    return 0;
}

/* Columns built together: their masses are read from the output-major thresholds one cache
   line (8 columns) at a time. */
#define BLOCK 8

PyDoc_STRVAR(alias_build_doc,
             "alias_build(thresholds, n_outputs, n_inputs, bits, alias_bits, table) -> None\n\n"
             "The alias tables of every column from the integer inversion thresholds, output-major\n"
             "(thresholds[y·n_inputs + x] = T[x, y], uint64, each column ending at 2⁵³), into table\n"
             "(uint64, n_inputs × 2^bits, column-major: x·2^bits + bucket), each entry prob << alias_bits\n"
             "| alias. ValueError if a column's thresholds decrease or do not end at 2⁵³.");

static PyObject *alias_build(PyObject *self, PyObject *args)
{
    Py_buffer tb, ob;
    Py_ssize_t b, a;
    int bits, alias_bits;
    if (!PyArg_ParseTuple(args, "y*nniiw*:alias_build", &tb, &b, &a, &bits, &alias_bits, &ob)) return NULL;
    PyObject *result = NULL;
    const Py_ssize_t buckets = (Py_ssize_t)1 << (bits < 1 || bits > 30 ? 0 : bits);
    if (bits < 1 || bits > 30 || alias_bits < 1 || alias_bits > 32 || b < 1 || a < 1 || b > buckets ||
        buckets > ((Py_ssize_t)1 << alias_bits) || 53 - bits + alias_bits > 64) {
        PyErr_Format(PyExc_ValueError, "alias_build: %zd outputs, bits %d, alias_bits %d out of range", b, bits, alias_bits);
    } else if (tb.itemsize != 8 || ob.itemsize != 8 || tb.len != b * a * 8 || ob.len != a * buckets * 8 ||
               !PyBuffer_IsContiguous(&tb, 'C') || !PyBuffer_IsContiguous(&ob, 'C')) {
        PyErr_SetString(PyExc_ValueError, "alias_build needs contiguous uint64 arrays of n_outputs × n_inputs and n_inputs × 2^bits");
    } else {
        int64_t *mass = PyMem_RawMalloc((size_t)(BLOCK * buckets) * sizeof(int64_t));
        int32_t *work = PyMem_RawMalloc((size_t)(3 * buckets) * sizeof(int32_t));
        if (mass == NULL || work == NULL) {
            PyErr_NoMemory();
        } else {
            const uint64_t *t = tb.buf;
            uint64_t *table = ob.buf;
            const int64_t cap = (int64_t)1 << (53 - bits);
            Py_ssize_t bad = -1;
            Py_BEGIN_ALLOW_THREADS;
            for (Py_ssize_t x0 = 0; x0 < a && bad < 0; x0 += BLOCK) {
                const Py_ssize_t nb = a - x0 < BLOCK ? a - x0 : BLOCK;
                uint64_t prev[BLOCK] = {0};
                for (Py_ssize_t y = 0; y < b; y++) {
                    const uint64_t *row = t + y * a + x0;
                    for (Py_ssize_t c = 0; c < nb; c++) {
                        mass[c * buckets + y] = (int64_t)(row[c] - prev[c]);
                        if (row[c] < prev[c]) bad = x0 + c;
                        prev[c] = row[c];
                    }
                }
                for (Py_ssize_t c = 0; c < nb && bad < 0; c++) {
                    int64_t *m = mass + c * buckets;
                    for (Py_ssize_t y = b; y < buckets; y++) m[y] = 0;
                    if (prev[c] != (UINT64_C(1) << 53) ||
                        vose_column(m, work, work + buckets, work + 2 * buckets, buckets, cap) < 0) {
                        bad = x0 + c;
                        break;
                    }
                    uint64_t *out = table + (x0 + c) * buckets;
                    for (Py_ssize_t i = 0; i < buckets; i++) out[i] = (uint64_t)m[i] << alias_bits | (uint64_t)work[i];
                }
            }
            Py_END_ALLOW_THREADS;
            if (bad >= 0)
                PyErr_Format(PyExc_ValueError, "alias_build: column %zd's thresholds decrease or do not end at 2**53", bad);
            else
                result = Py_NewRef(Py_None);
        }
        PyMem_RawFree(mass);
        PyMem_RawFree(work);
    }
    PyBuffer_Release(&tb);
    PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef methods[] = {
    {"alias_build", alias_build, METH_VARARGS, alias_build_doc},
    {"alias_sample", alias_sample, METH_VARARGS, alias_sample_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_alias", "The alias tables of rldp.client.alias, built and read in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__alias(void) { return PyModule_Create(&module); }

/* rldp.client._alias_sample: the alias-table lookup of rldp.client.alias in one C loop.

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

static PyMethodDef methods[] = {
    {"alias_sample", alias_sample, METH_VARARGS, alias_sample_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_alias_sample", "The alias-table lookup of rldp.client.alias in one C loop.", -1, methods,
};

PyMODINIT_FUNC PyInit__alias_sample(void) { return PyModule_Create(&module); }

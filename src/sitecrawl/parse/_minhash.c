/* sitecrawl.parse._minhash: a page's content signature for the near-duplicate audit.
 *
 * signature(utf8) reads the text as tokens (runs of ASCII letters and digits and of non-ASCII
 * bytes, ASCII lower-cased), and answers (exact, minhash, tokens): exact, a 64-bit hash of
 * the token sequence (two texts with the same words in the same order have the same);
 * minhash, NPERM 32-bit minima (little-endian bytes) of the 5-token shingles' hashes under
 * NPERM multiply-shift hashes; or None for both below MIN_TOKENS tokens. similarity(a, b)
 * is the share of equal minima: an estimate of the two shingle sets' Jaccard similarity.
 *
 * Python twin, with the constants' reasons: sitecrawl/parse/_signature.py (the tests hold
 * the two to the same answers).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define NPERM 128
#define SHINGLE 5
#define MIN_TOKENS 10
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define GOLDEN 0x9E3779B97F4A7C15ULL

static uint64_t mul_a[NPERM], add_b[NPERM];

static uint64_t
splitmix(uint64_t *state)
{
    uint64_t z = (*state += GOLDEN);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t
mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void
init_perms(void)
{
    uint64_t state = 0x5173C4A1ULL; /* "sitecrawl", any fixed seed */
    for (int i = 0; i < NPERM; i++) {
        mul_a[i] = splitmix(&state) | 1;
        add_b[i] = splitmix(&state);
    }
}

static inline int
token_byte(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z');
}

/* The minima of one block of shingle hashes, NPERM at a time: no state carried from one
   permutation to the next, so the compiler vectorizes the inner loop. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
fold_minima(uint32_t *minima, const uint64_t *shingles, Py_ssize_t n)
{
    for (Py_ssize_t s = 0; s < n; s++) {
        uint64_t x = shingles[s];
        for (int i = 0; i < NPERM; i++) {
            uint32_t v = (uint32_t)((mul_a[i] * x + add_b[i]) >> 32);
            minima[i] = v < minima[i] ? v : minima[i];
        }
    }
}

static PyObject *
signature(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *p = view.buf;
    Py_ssize_t n = view.len;
    uint64_t window[SHINGLE];
    uint64_t block[256];
    Py_ssize_t filled = 0, tokens = 0;
    uint64_t exact = FNV_OFFSET;
    uint32_t minima[NPERM];
    memset(minima, 0xff, sizeof minima);
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = 0;
    while (i < n) {
        while (i < n && !token_byte(p[i]))
            i++;
        if (i >= n)
            break;
        uint64_t h = FNV_OFFSET;
        while (i < n && token_byte(p[i])) {
            unsigned char c = p[i++];
            if (c >= 'A' && c <= 'Z')
                c += 32;
            h = (h ^ c) * FNV_PRIME;
        }
        exact = (exact ^ h) * FNV_PRIME;
        window[tokens % SHINGLE] = h;
        tokens++;
        if (tokens >= SHINGLE) {
            uint64_t s = 0;
            for (Py_ssize_t j = tokens - SHINGLE; j < tokens; j++)
                s = s * GOLDEN + window[j % SHINGLE];
            block[filled++] = mix(s);
            if (filled == 256) {
                fold_minima(minima, block, filled);
                filled = 0;
            }
        }
    }
    if (filled)
        fold_minima(minima, block, filled);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (tokens < MIN_TOKENS)
        return Py_BuildValue("(OOn)", Py_None, Py_None, tokens);
    unsigned char out[NPERM * 4];
    for (int k = 0; k < NPERM; k++) {
        uint32_t v = minima[k];
        out[4 * k] = (unsigned char)v;
        out[4 * k + 1] = (unsigned char)(v >> 8);
        out[4 * k + 2] = (unsigned char)(v >> 16);
        out[4 * k + 3] = (unsigned char)(v >> 24);
    }
    return Py_BuildValue("(Ky#n)", (unsigned long long)exact, (const char *)out,
                         (Py_ssize_t)sizeof out, tokens);
}

static PyObject *
similarity(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "similarity(a, b, /) takes two signatures");
        return NULL;
    }
    Py_buffer a, b;
    if (PyObject_GetBuffer(args[0], &a, PyBUF_SIMPLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &b, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&a);
        return NULL;
    }
    PyObject *result = NULL;
    if (a.len != NPERM * 4 || b.len != NPERM * 4) {
        PyErr_Format(PyExc_ValueError, "a signature is %d bytes", NPERM * 4);
    } else {
        const uint32_t *x = a.buf, *y = b.buf;
        int same = 0;
        for (int i = 0; i < NPERM; i++) {
            uint32_t u, v;
            memcpy(&u, x + i, 4);
            memcpy(&v, y + i, 4);
            same += u == v;
        }
        result = PyFloat_FromDouble((double)same / NPERM);
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return result;
}

static PyMethodDef methods[] = {
    {"signature", signature, METH_O,
     "signature(utf8, /)\n--\n\n(exact hash, minhash bytes, tokens) of a text's tokens."},
    {"similarity", (PyCFunction)(void (*)(void))similarity, METH_FASTCALL,
     "similarity(a, b, /)\n--\n\nThe share of equal minima of two signatures."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sitecrawl.parse._minhash",
    "MinHash signatures of a page's text (see _signature.py).", 0, methods,
};

PyMODINIT_FUNC
PyInit__minhash(void)
{
    init_perms();
    return PyModule_Create(&module);
}

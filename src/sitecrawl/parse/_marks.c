/* sitecrawl.parse._marks: structured_marks(text), the marks of structured data a page's text
 * may hold, read before the tree is walked for them (parse/_structured.py). Its Python twin is
 * structured_marks_py in _markup.py: the tests hold the two to the same answers, so a change
 * here is a change there.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <immintrin.h>
#endif

static unsigned char LOWER[256];
#define IS_ALPHA(c) ((unsigned)(((c) | 0x20) - 'a') < 26)

/* structured_marks(text) -> int: which structured-data markup a page's text may hold, a bit
   each (MARK_*): an attribute named itemscope (Microdata), one named typeof (RDFa), and a JSON-LD
   script's type ("ld+json", or its '+' a character reference: "ld&" then up to 32 of
   [#0-9A-Za-z;] then "json"). Twin of structured_marks_py in _markup.py. It errs towards yes,
   never no: ASCII case-insensitive, and a name counts wherever it stands as an attribute's name
   could (after whitespace, '/' or a quote; before whitespace, '/', '>', '=' or the end), also in
   text or a script. Over the str's code units (1, 2 or 4 bytes), what the tree builder reads.
   Each word is looked for from a rare pair of its letters ("ms", "eo", "js"), found 16 or 32
   bytes at a time (SSE2, AVX2) in a 1-byte str, one at a time in a wider one. */
enum { MARK_ITEMSCOPE = 1, MARK_TYPEOF = 2, MARK_JSON_LD = 4, MARK_ALL = 7 };
#define ENTITY_REACH 32

#define BEFORE_NAME(c) \
    ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\f' || (c) == '\r' || (c) == '/' || \
     (c) == '"' || (c) == '\'')
#define AFTER_NAME(c) \
    ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\f' || (c) == '\r' || (c) == '/' || \
     (c) == '>' || (c) == '=')
#define IN_REFERENCE(c) \
    ((c) < 128 && ((c) == '#' || (c) == ';' || IS_ALPHA(c) || ((c) >= '0' && (c) <= '9')))

#define MARKS_OF(T, NAME)                                                                       \
    static int NAME##_word(const T *s, Py_ssize_t n, Py_ssize_t i, const char *word,           \
                           Py_ssize_t len)                                                      \
    {                                                                                           \
        if (i < 0 || i + len > n)                                                               \
            return 0;                                                                           \
        for (Py_ssize_t k = 0; k < len; k++)                                                    \
            if (s[i + k] >= 128 || LOWER[s[i + k]] != (unsigned char)word[k])                  \
                return 0;                                                                       \
        return 1;                                                                               \
    }                                                                                           \
    static int NAME##_name(const T *s, Py_ssize_t n, Py_ssize_t i, const char *word,           \
                           Py_ssize_t len)                                                      \
    {                                                                                           \
        return i > 0 && BEFORE_NAME(s[i - 1]) && NAME##_word(s, n, i, word, len) &&            \
               (i + len == n || AFTER_NAME(s[i + len]));                                        \
    }                                                                                           \
    /* The marks whose anchor is at k: "ms" of itemscope, "eo" of typeof, "js" of json. */    \
    static int NAME##_at(const T *s, Py_ssize_t n, Py_ssize_t k)                                \
    {                                                                                           \
        T c = s[k] | 0x20; /* ASCII-folded; a unit >= 256 never folds to ASCII */              \
        if (c == 'm')                                                                           \
            return NAME##_name(s, n, k - 3, "itemscope", 9) ? MARK_ITEMSCOPE : 0;               \
        if (c == 'e')                                                                           \
            return NAME##_name(s, n, k - 3, "typeof", 6) ? MARK_TYPEOF : 0;                     \
        if (c != 'j' || !NAME##_word(s, n, k, "json", 4))                                       \
            return 0;                                                                           \
        if (k >= 1 && s[k - 1] == '+')                                                          \
            return NAME##_word(s, n, k - 3, "ld", 2) ? MARK_JSON_LD : 0;                        \
        Py_ssize_t r = k - 1;                                                                   \
        while (r >= 0 && k - 1 - r < ENTITY_REACH && IN_REFERENCE(s[r]))                       \
            r--;                                                                                \
        return r >= 0 && s[r] == '&' && NAME##_word(s, n, r - 2, "ld", 2) ? MARK_JSON_LD : 0;   \
    }                                                                                           \
    static int NAME##_from(const T *s, Py_ssize_t n, Py_ssize_t i, int found)                   \
    {                                                                                           \
        for (; i < n && found != MARK_ALL; i++)                                                 \
            found |= NAME##_at(s, n, i);                                                        \
        return found;                                                                           \
    }

MARKS_OF(Py_UCS1, marks_ucs1)
MARKS_OF(Py_UCS2, marks_ucs2)
MARKS_OF(Py_UCS4, marks_ucs4)

/* A 1-byte str: the anchors' pairs 16 (or 32) bytes at a time, the rest one at a time. */
#if defined(__SSE2__) && defined(__GNUC__)
#define ANCHORS(V, SET1, LOAD, OR, AND, EQ, MOVEMASK, WIDTH)                                    \
    {                                                                                           \
        const V fold = SET1(0x20), m = SET1('m'), e = SET1('e'), j = SET1('j'), s_ = SET1('s'),  \
                o = SET1('o');                                                                  \
        for (; i + WIDTH + 1 <= n && found != MARK_ALL; i += WIDTH) {                           \
            V at = OR(LOAD((const V *)(s + i)), fold), on = OR(LOAD((const V *)(s + i + 1)), fold); \
            V is_s = EQ(on, s_);                                                                \
            V hit = OR(AND(EQ(at, m), is_s), OR(AND(EQ(at, e), EQ(on, o)), AND(EQ(at, j), is_s))); \
            for (unsigned mask = (unsigned)MOVEMASK(hit); mask; mask &= mask - 1)               \
                found |= marks_ucs1_at(s, n, i + __builtin_ctz(mask));                          \
        }                                                                                       \
    }

#ifdef __x86_64__
__attribute__((target("avx2"))) static int
marks_avx2(const Py_UCS1 *s, Py_ssize_t n)
{
    int found = 0;
    Py_ssize_t i = 0;
    ANCHORS(__m256i, _mm256_set1_epi8, _mm256_loadu_si256, _mm256_or_si256, _mm256_and_si256,
            _mm256_cmpeq_epi8, _mm256_movemask_epi8, 32)
    return marks_ucs1_from(s, n, i, found);
}
#endif
#endif

static int
marks_bytes(const Py_UCS1 *s, Py_ssize_t n)
{
    int found = 0;
    Py_ssize_t i = 0;
#if defined(__SSE2__) && defined(__GNUC__)
#ifdef __x86_64__
    if (__builtin_cpu_supports("avx2"))
        return marks_avx2(s, n);
#endif
    ANCHORS(__m128i, _mm_set1_epi8, _mm_loadu_si128, _mm_or_si128, _mm_and_si128, _mm_cmpeq_epi8,
            _mm_movemask_epi8, 16)
#endif
    return marks_ucs1_from(s, n, i, found);
}

static PyObject *
structured_marks(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "structured_marks() takes str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const void *data = PyUnicode_DATA(text);
    int found;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        found = marks_bytes(data, n);
        break;
    case PyUnicode_2BYTE_KIND:
        found = marks_ucs2_from(data, n, 0, 0);
        break;
    default:
        found = marks_ucs4_from(data, n, 0, 0);
    }
    return PyLong_FromLong(found);
}

static PyMethodDef methods[] = {
    {"structured_marks", structured_marks, METH_O,
     "structured_marks(text, /)\n--\n\n"
     "Bits: 1 an itemscope attribute, 2 a typeof one, 4 a JSON-LD type (errs towards yes)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sitecrawl.parse._marks", "Structured data's marks (see _markup.py).",
    0, methods,
};

PyMODINIT_FUNC
PyInit__marks(void)
{
    for (int c = 0; c < 256; c++)
        LOWER[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return PyModule_Create(&module);
}

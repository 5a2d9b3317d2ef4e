/* sitecrawl._speedups: the two hot loops of a page's parse that no library does for us.
 *
 * count_words(text) counts the runs of characters between whitespace (the characters
 * str.split() splits on: str.isspace()), over the str's own storage: no copy, no word
 * objects. Python twin: sitecrawl/_words.py.
 *
 * join_plain(raw, directory, origin) resolves a plain path reference by string operations,
 * or answers None for any other (which the caller then gives to the URL parser, ada-url).
 * Python twin, with the reasoning: _join_plain in sitecrawl/_urls.py.
 *
 * Both are used only when this module was built; the tests hold each to its twin and to
 * the URL parser.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* 1 for a character str.isspace() accepts, else 0, computed in the character's own width
   (TYPE) so that vector lanes stay that narrow: \t \n \v \f \r, \x1c-\x1f, space, U+0085
   and U+00A0 (SPACE1, all a 1-byte str can hold; SPACE_ASCII without the last two), then U+1680, U+2000-U+200A, U+2028,
   U+2029, U+202F, U+205F and U+3000 (SPACE). Branch-free, so the loop below vectorizes. */
#define SPACE_ASCII(TYPE, c) ((TYPE)(((TYPE)((c) - 9) < 5) | ((TYPE)((c) - 28) < 5)))
#define SPACE1(TYPE, c)                                                            \
    ((TYPE)(((TYPE)((c) - 9) < 5) | ((TYPE)((c) - 28) < 5) | ((c) == 0x85) |       \
            ((c) == 0xA0)))
#define SPACE(TYPE, c)                                                             \
    ((TYPE)(SPACE1(TYPE, c) | ((TYPE)((c) - 0x2000) < 11) |                        \
            ((TYPE)((c) - 0x2028) < 2) | ((c) == 0x1680) | ((c) == 0x202F) |       \
            ((c) == 0x205F) | ((c) == 0x3000)))

/* A word starts at each non-space that follows a space (or the start of the text). The
   text goes in blocks of 256 characters: first each character's space flag (one byte), then
   the starts among them, summed in a byte (at most 255 of them, so it cannot overflow). No
   state is carried from one character to the next, so the compiler vectorizes both loops.
   SP is the space test: SPACE1 for a 1-byte str. */
#define COUNT_STARTS(TYPE, SP)                                             \
    do {                                                                   \
        const TYPE *p = (const TYPE *)data;                                \
        unsigned char flags[257];                                          \
        flags[0] = 1; /* the start of the text counts as a space */        \
        words = 0;                                                         \
        for (Py_ssize_t start = 0; start < n; start += 256) {              \
            Py_ssize_t m = n - start < 256 ? n - start : 256;              \
            for (Py_ssize_t i = 0; i < m; i++)                             \
                flags[i + 1] = (unsigned char)SP(TYPE, p[start + i]);      \
            unsigned char block = 0;                                       \
            for (Py_ssize_t i = 0; i < m; i++)                             \
                block += flags[i] & (flags[i + 1] ^ 1);                    \
            words += block;                                                \
            flags[0] = flags[m];                                           \
        }                                                                  \
    } while (0)

/* Built twice where the compiler can (GCC's function multiversioning on x86-64): for AVX2,
   which tests twice as many characters at once, and for any x86-64; the loader picks one. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static PyObject *
count_words(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "count_words() takes a str, not %.100s",
                     Py_TYPE(text)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n == 0)
        return PyLong_FromLong(0);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t words;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        if (PyUnicode_IS_ASCII(text))
            COUNT_STARTS(Py_UCS1, SPACE_ASCII);
        else
            COUNT_STARTS(Py_UCS1, SPACE1);
        break;
    case PyUnicode_2BYTE_KIND:
        COUNT_STARTS(Py_UCS2, SPACE);
        break;
    default:
        COUNT_STARTS(Py_UCS4, SPACE);
        break;
    }
    return PyLong_FromSsize_t(words);
}

/* The characters _PLAIN_PATH accepts: [A-Za-z0-9-._~!$&'()*+,;=@/]. */
static const char PLAIN_PUNCT[] = "-._~!$&'()*+,;=@/";
static unsigned char PLAIN[128];

static void
init_plain(void)
{
    for (int c = '0'; c <= '9'; c++)
        PLAIN[c] = 1;
    for (int c = 'A'; c <= 'Z'; c++)
        PLAIN[c] = PLAIN[c + 'a' - 'A'] = 1;
    for (const char *p = PLAIN_PUNCT; *p; p++)
        PLAIN[(unsigned char)*p] = 1;
}

static int
all_plain(const char *s, Py_ssize_t n)
{
    if (n == 0)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PLAIN[(unsigned char)s[i]])
            return 0;
    return 1;
}

/* origin + path with dot segments resolved: ".." drops the segment before it (never the
   root), "." goes, and a last "." or ".." leaves a trailing "/". path starts with "/". */
static PyObject *
resolve_dots(const char *origin, Py_ssize_t no, const char *path, Py_ssize_t np)
{
    /* The result is never longer than origin + path + the trailing "/" of a last dot. */
    char stack_buf[1024];
    Py_ssize_t cap = no + np + 2;
    char *out = cap <= (Py_ssize_t)sizeof(stack_buf) ? stack_buf : PyMem_Malloc(cap);
    if (out == NULL)
        return PyErr_NoMemory();
    memcpy(out, origin, no);
    Py_ssize_t len = no, kept = 0;
    Py_ssize_t i = 1;  /* past the leading "/" */
    for (;;) {
        Py_ssize_t j = i;
        while (j < np && path[j] != '/')
            j++;
        Py_ssize_t seg = j - i;
        int last = j >= np;
        if (seg == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (kept > 0) {
                while (out[len - 1] != '/')
                    len--;
                len--;  /* and the "/" before the dropped segment */
                kept--;
            }
            if (last)
                out[len++] = '/';
        }
        else if (seg == 1 && path[i] == '.') {
            if (last)
                out[len++] = '/';
        }
        else {
            out[len++] = '/';
            memcpy(out + len, path + i, seg);
            len += seg;
            kept++;
        }
        if (last)
            break;
        i = j + 1;
    }
    if (len == no)
        out[len++] = '/';
    PyObject *result = PyUnicode_FromStringAndSize(out, len);
    if (out != stack_buf)
        PyMem_Free(out);
    return result;
}

static PyObject *
join_plain(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyUnicode_Check(args[1]) ||
        !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "join_plain() takes three str: raw, directory, origin");
        return NULL;
    }
    PyObject *raw = args[0], *directory = args[1], *origin = args[2];
    /* Plain references are ASCII; a canonical href is too (anything else: the parser). */
    if (!PyUnicode_IS_ASCII(raw) || !PyUnicode_IS_ASCII(directory) || !PyUnicode_IS_ASCII(origin))
        Py_RETURN_NONE;
    const char *r = (const char *)PyUnicode_DATA(raw);
    Py_ssize_t nr = PyUnicode_GET_LENGTH(raw);
    const char *o = (const char *)PyUnicode_DATA(origin);
    Py_ssize_t no = PyUnicode_GET_LENGTH(origin);
    const char *prefix;  /* the URL is prefix + rest */
    Py_ssize_t nprefix;
    const char *rest;
    Py_ssize_t nrest;
    if (all_plain(r, nr)) {
        if (r[0] != '/') {  /* path-relative: the base's directory, then raw */
            prefix = (const char *)PyUnicode_DATA(directory);
            nprefix = PyUnicode_GET_LENGTH(directory);
        }
        else if (nr == 1 || r[1] != '/') {  /* path-absolute: the origin, then raw */
            prefix = o;
            nprefix = no;
        }
        else {
            Py_RETURN_NONE;  /* "//host/a" names its own authority */
        }
        rest = r;
        nrest = nr;
    }
    else if (nr > no && memcmp(r, o, no) == 0 && r[no] == '/' && all_plain(r + no, nr - no)) {
        prefix = r;  /* absolute on the base's own origin */
        nprefix = 0;
        rest = r;
        nrest = nr;
    }
    else {
        Py_RETURN_NONE;
    }
    /* Dot segments only where "/." occurs (".well-known" is one and stays as it is). */
    int dots = nprefix > 0 && prefix[nprefix - 1] == '/' && rest[0] == '.';
    for (Py_ssize_t i = 0; !dots && i + 1 < nprefix; i++)
        dots = prefix[i] == '/' && prefix[i + 1] == '.';
    for (Py_ssize_t i = 0; !dots && i + 1 < nrest; i++)
        dots = rest[i] == '/' && rest[i + 1] == '.';
    if (!dots) {
        if (nprefix == 0) {
            Py_INCREF(raw);
            return raw;
        }
        PyObject *url = PyUnicode_New(nprefix + nrest, 127);
        if (url == NULL)
            return NULL;
        memcpy(PyUnicode_DATA(url), prefix, nprefix);
        memcpy((char *)PyUnicode_DATA(url) + nprefix, rest, nrest);
        return url;
    }
    /* The path: everything after the origin (prefix and raw both start with it, or prefix
       is the directory, which does). */
    char stack_buf[1024];
    Py_ssize_t n = nprefix + nrest;
    char *url = n <= (Py_ssize_t)sizeof(stack_buf) ? stack_buf : PyMem_Malloc(n);
    if (url == NULL)
        return PyErr_NoMemory();
    memcpy(url, prefix, nprefix);
    memcpy(url + nprefix, rest, nrest);
    PyObject *result = resolve_dots(o, no, url + no, n - no);
    if (url != stack_buf)
        PyMem_Free(url);
    return result;
}

static PyMethodDef methods[] = {
    {"count_words", count_words, METH_O,
     "count_words(text, /)\n--\n\nlen(text.split()), without making the words."},
    {"join_plain", (PyCFunction)(void (*)(void))join_plain, METH_FASTCALL,
     "join_plain(raw, directory, origin, /)\n--\n\n"
     "A plain path reference resolved by string operations, else None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sitecrawl._speedups", "Compiled hot loops (see _words.py and _urls.py).", 0,
    methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    init_plain();
    return PyModule_Create(&module);
}

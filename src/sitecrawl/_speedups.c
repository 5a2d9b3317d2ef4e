/* sitecrawl._speedups: the one hot loop that no library does for us.
 *
 * count_words(text) counts the runs of characters between ASCII whitespace (the six
 * characters bytes.split() splits on), over the str's own storage: no copy, no word
 * objects. The pure-Python equivalent, used when this module is not built, is in
 * sitecrawl/_words.py; the tests hold the two to the same answers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* \t \n \v \f \r and space. */
#define SPACE(c) (((c) == 32) | ((unsigned)(c) - 9u < 5u))

/* A word starts at each non-space that follows a space (or the start of the text). No
   state is carried from one character to the next, so the compiler can vectorize. */
#define COUNT_STARTS(TYPE)                                \
    do {                                                  \
        const TYPE *p = (const TYPE *)data;               \
        words = !SPACE(p[0]);                             \
        for (Py_ssize_t i = 1; i < n; i++)                \
            words += SPACE(p[i - 1]) & !SPACE(p[i]);      \
    } while (0)

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
        COUNT_STARTS(Py_UCS1);
        break;
    case PyUnicode_2BYTE_KIND:
        COUNT_STARTS(Py_UCS2);
        break;
    default:
        COUNT_STARTS(Py_UCS4);
        break;
    }
    return PyLong_FromSsize_t(words);
}

static PyMethodDef methods[] = {
    {"count_words", count_words, METH_O,
     "count_words(text, /)\n--\n\nThe number of runs of characters between ASCII whitespace."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sitecrawl._speedups", "Compiled hot loops (see _words.py).", 0,
    methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}

/* sitecrawl.parse._links: one walk over a parsed document's elements (selectolax's Lexbor tree)
 * that reads what the crawler takes from its links: each <a href> (with rel and, when asked,
 * its text as a browser shows it), each <img src> (with alt) and, when asked, each <link href>,
 * <script src> and <iframe src> (with rel). Its Python twin is in sitecrawl/parse/_extract.py
 * (_anchors, _images, inner_texts, _resource_links' scans): the tests hold the two to the same
 * answers on every page they parse, so a change here is a change there.
 *
 * The walk calls Lexbor's own functions, the ones selectolax's extension exports (its "_noi"
 * accessors are there for callers outside Lexbor), found with dlsym in the module selectolax
 * has loaded: no Lexbor header or struct layout is compiled in, every node is an opaque
 * pointer. The tree comes as the addresses selectolax gives for its nodes (``mem_id``).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#define HAVE_DLFCN 1
#endif

typedef void node_t;
typedef const unsigned char *(*name_fn)(node_t *, size_t *);
typedef node_t *(*step_fn)(node_t *);
typedef unsigned int (*type_fn)(node_t *);
typedef unsigned char *(*text_fn)(node_t *, size_t *);
typedef void *(*free_text_fn)(node_t *, unsigned char *);

static struct {
    step_fn first_child, next, parent, first_attr, next_attr;
    type_fn type;
    name_fn local_name, attr_name, attr_value;
    text_fn text_content;
    free_text_fn destroy_text;
} lx;

enum { ELEMENT = 1, TEXT = 3, COMMENT = 8 }; /* the DOM's node types, as Lexbor numbers them */

/* The elements whose edges separate words in innerText (sitecrawl/parse/_text.py's _BREAKS). */
static const char *const BREAKS[] = {
    "br", "address", "article", "aside", "blockquote", "body", "caption", "center", "colgroup",
    "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
    "footer", "form", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr",
    "html", "legend", "li", "listing", "main", "menu", "nav", "ol", "optgroup", "option", "p",
    "plaintext", "pre", "search", "section", "summary", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "ul", "xmp", NULL,
};

static int
is(const unsigned char *name, size_t len, const char *want)
{
    return strlen(want) == len && memcmp(name, want, len) == 0;
}

static int
is_break(node_t *node)
{
    if (lx.type(node) != ELEMENT)
        return 0;
    size_t len = 0;
    const unsigned char *name = lx.local_name(node, &len);
    if (name == NULL)
        return 0;
    for (const char *const *b = BREAKS; *b; b++)
        if (is(name, len, *b))
            return 1;
    return 0;
}

static PyObject *
decode(const unsigned char *data, size_t len)
{
    return PyUnicode_DecodeUTF8((const char *)data, (Py_ssize_t)len, "replace");
}

/* A node's text (Lexbor's text_content, decoded as selectolax does); NULL with no error set
   when Lexbor gives none. */
static PyObject *
text_of(node_t *node, node_t *doc)
{
    size_t len = 0;
    unsigned char *text = lx.text_content(node, &len);
    if (text == NULL)
        return NULL;
    PyObject *out = decode(text, len);
    lx.destroy_text(doc, text);
    return out;
}

/* Python's " ".join(text.split()): an ASCII text collapsed here, any other through str.split
   (which splits at every Unicode space). Steals the reference to text. */
static PyObject *
collapse(PyObject *text)
{
    if (text == NULL)
        return NULL;
    if (!PyUnicode_IS_ASCII(text)) {
        PyObject *parts = PyUnicode_Split(text, NULL, -1);
        Py_DECREF(text);
        if (parts == NULL)
            return NULL;
        PyObject *space = PyUnicode_FromStringAndSize(" ", 1);
        PyObject *out = space ? PyUnicode_Join(space, parts) : NULL;
        Py_XDECREF(space);
        Py_DECREF(parts);
        return out;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const unsigned char *in = PyUnicode_1BYTE_DATA(text);
    PyObject *out = PyUnicode_New(n, 127);
    if (out == NULL) {
        Py_DECREF(text);
        return NULL;
    }
    unsigned char *dst = PyUnicode_1BYTE_DATA(out);
    Py_ssize_t k = 0;
    int gap = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = in[i];
        /* str.isspace() in ASCII: \t \n \v \f \r, \x1c-\x1f and the space */
        if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) {
            gap = k > 0;
            continue;
        }
        if (gap) {
            dst[k++] = ' ';
            gap = 0;
        }
        dst[k++] = c;
    }
    Py_DECREF(text);
    if (k == n)
        return out;
    PyObject *cut = PyUnicode_Substring(out, 0, k);
    Py_DECREF(out);
    return cut;
}

/* _text.py's _walked_text past its first test: the text pieces, a space at each edge of a
   break element, comments skipped. */
static PyObject *
walked_text(node_t *node, node_t *doc)
{
    PyObject *pieces = PyList_New(0);
    if (pieces == NULL)
        return NULL;
    PyObject *space = PyUnicode_FromStringAndSize(" ", 1);
    if (space == NULL)
        goto fail;
    /* (block?, next sibling) per level */
    Py_ssize_t depth = 0, cap = 16;
    struct level { int block; node_t *next; } *resume = PyMem_Malloc(cap * sizeof *resume);
    if (resume == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    node_t *child = lx.first_child(node);
    for (;;) {
        while (child == NULL) {
            if (depth == 0) {
                PyMem_Free(resume);
                PyObject *empty = PyUnicode_FromStringAndSize("", 0);
                PyObject *joined = empty ? PyUnicode_Join(empty, pieces) : NULL;
                Py_XDECREF(empty);
                Py_DECREF(space);
                Py_DECREF(pieces);
                return collapse(joined);
            }
            depth--;
            child = resume[depth].next;
            if (resume[depth].block && PyList_Append(pieces, space) < 0)
                goto fail_resume;
        }
        unsigned int type = lx.type(child);
        if (type == TEXT) {
            PyObject *text = text_of(child, doc);
            if (text == NULL && PyErr_Occurred())
                goto fail_resume;
            if (text != NULL) {
                int bad = PyList_Append(pieces, text);
                Py_DECREF(text);
                if (bad < 0)
                    goto fail_resume;
            }
            child = lx.next(child);
        }
        else if (type == COMMENT) {
            child = lx.next(child);
        }
        else {
            int block = is_break(child);
            if (block && PyList_Append(pieces, space) < 0)
                goto fail_resume;
            if (depth == cap) {
                cap *= 2;
                struct level *grown = PyMem_Realloc(resume, cap * sizeof *resume);
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto fail_resume;
                }
                resume = grown;
            }
            resume[depth].block = block;
            resume[depth].next = lx.next(child);
            depth++;
            child = lx.first_child(child);
        }
    }
fail_resume:
    PyMem_Free(resume);
fail:
    Py_XDECREF(space);
    Py_DECREF(pieces);
    return NULL;
}

/* The next node after ``node`` in document order within ``root``'s subtree, its children
   first unless ``skip_children``. */
static node_t *
following(node_t *node, node_t *root, int skip_children)
{
    node_t *child = skip_children ? NULL : lx.first_child(node);
    if (child != NULL)
        return child;
    while (node != root) {
        node_t *next = lx.next(node);
        if (next != NULL)
            return next;
        node = lx.parent(node);
    }
    return NULL;
}

/* _text.py's inner_texts for one element. */
static PyObject *
inner_text(node_t *node, node_t *doc)
{
    node_t *child = lx.first_child(node);
    if (child == NULL)
        return PyUnicode_FromStringAndSize("", 0);
    if (lx.next(child) == NULL && lx.type(child) == TEXT) {
        PyObject *text = text_of(child, doc);
        if (text != NULL || PyErr_Occurred())
            return collapse(text);
    }
    for (node_t *inner = child; inner != NULL; inner = following(inner, node, 0))
        if (is_break(inner))
            return walked_text(node, doc);
    PyObject *text = text_of(node, doc);
    if (text == NULL && !PyErr_Occurred())
        return PyUnicode_FromStringAndSize("", 0);
    return collapse(text);
}

/* The values of an element's attributes named in ``names`` (the last of a name wins, as in
   selectolax's attributes dict; an attribute without a value reads as absent: None). */
static int
read_attrs(node_t *el, const char *const *names, int count, PyObject **values)
{
    const unsigned char *found[4] = {NULL, NULL, NULL, NULL};
    size_t sizes[4] = {0, 0, 0, 0};
    for (node_t *attr = lx.first_attr(el); attr != NULL; attr = lx.next_attr(attr)) {
        size_t len = 0;
        const unsigned char *name = lx.attr_name(attr, &len);
        if (name == NULL)
            continue;
        for (int i = 0; i < count; i++) {
            if (is(name, len, names[i])) {
                size_t vlen = 0;
                found[i] = lx.attr_value(attr, &vlen);
                sizes[i] = vlen;
            }
        }
    }
    for (int i = 0; i < count; i++) {
        if (found[i] == NULL) {
            values[i] = Py_NewRef(Py_None);
            continue;
        }
        values[i] = decode(found[i], sizes[i]);
        if (values[i] == NULL) {
            while (i-- > 0)
                Py_DECREF(values[i]);
            return -1;
        }
    }
    return 0;
}

/* Append a tuple of ``n`` new references to ``list`` (the references consumed). */
static int
append_tuple(PyObject *list, int n, PyObject **items)
{
    PyObject *tuple = PyTuple_New(n);
    if (tuple == NULL) {
        for (int i = 0; i < n; i++)
            Py_DECREF(items[i]);
        return -1;
    }
    for (int i = 0; i < n; i++)
        PyTuple_SET_ITEM(tuple, i, items[i]);
    int bad = PyList_Append(list, tuple);
    Py_DECREF(tuple);
    return bad;
}

static const char *const A_ATTRS[] = {"href", "rel"};
static const char *const IMG_ATTRS[] = {"src", "alt"};
static const char *const SRC_ATTRS[] = {"src", "rel"};

static int ready = 0;

static PyObject *
scan(PyObject *Py_UNUSED(self), PyObject *args)
{
    unsigned long long root_id = 0, doc_id = 0;
    int details = 0;
    if (!PyArg_ParseTuple(args, "KKp:scan", &root_id, &doc_id, &details))
        return NULL;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "sitecrawl.parse._links: bind() first");
        return NULL;
    }
    node_t *root = (node_t *)(uintptr_t)root_id, *doc = (node_t *)(uintptr_t)doc_id;
    /* hrefs, rels and texts of the anchors (texts: None unless details), srcs and alts of the
       images, then (value, rel) of each <link>, <script>, <iframe>, then the <h2> texts */
    enum { HREFS, RELS, TEXTS, SRCS, ALTS, LINKS, SCRIPTS, IFRAMES, H2S, N_LISTS };
    PyObject *lists[N_LISTS] = {NULL};
    for (int i = 0; i < N_LISTS; i++)
        if ((i != TEXTS || details) && (lists[i] = PyList_New(0)) == NULL)
            goto fail;
    for (node_t *node = root; node != NULL; node = following(node, root, 0)) {
        if (lx.type(node) != ELEMENT)
            continue;
        size_t len = 0;
        const unsigned char *name = lx.local_name(node, &len);
        if (name == NULL)
            continue;
        PyObject *v[2];
        int first = -1, kind = 0;
        if (is(name, len, "h2")) {
            PyObject *text = inner_text(node, doc);
            if (text == NULL)
                goto fail;
            int bad = PyList_Append(lists[H2S], text) < 0;
            Py_DECREF(text);
            if (bad)
                goto fail;
            continue;
        }
        if (is(name, len, "a")) {
            if (read_attrs(node, A_ATTRS, 2, v) < 0)
                goto fail;
            first = HREFS;
        }
        else if (is(name, len, "img")) {
            if (read_attrs(node, IMG_ATTRS, 2, v) < 0)
                goto fail;
            first = SRCS;
        }
        else if (details && (kind = is(name, len, "link")     ? LINKS
                                    : is(name, len, "script") ? SCRIPTS
                                    : is(name, len, "iframe") ? IFRAMES
                                                              : 0)) {
            if (read_attrs(node, kind == LINKS ? A_ATTRS : SRC_ATTRS, 2, v) < 0)
                goto fail;
        }
        else
            continue;
        if (v[0] == Py_None) { /* no href, no src: not a link */
            Py_DECREF(v[0]);
            Py_DECREF(v[1]);
            continue;
        }
        if (kind) {
            if (append_tuple(lists[kind], 2, v) < 0)
                goto fail;
            continue;
        }
        int bad = PyList_Append(lists[first], v[0]) < 0 || PyList_Append(lists[first + 1], v[1]) < 0;
        Py_DECREF(v[0]);
        Py_DECREF(v[1]);
        if (bad)
            goto fail;
        if (first == HREFS && details) {
            PyObject *text = inner_text(node, doc);
            if (text == NULL)
                goto fail;
            bad = PyList_Append(lists[TEXTS], text) < 0;
            Py_DECREF(text);
            if (bad)
                goto fail;
        }
    }
    if (!details)
        lists[TEXTS] = Py_NewRef(Py_None);
    return Py_BuildValue("(NNNNNNNNN)", lists[0], lists[1], lists[2], lists[3], lists[4],
                         lists[5], lists[6], lists[7], lists[8]);
fail:
    for (int i = 0; i < N_LISTS; i++)
        Py_XDECREF(lists[i]);
    return NULL;
}

/* bind(path): find Lexbor's functions in selectolax's extension at ``path`` (already loaded:
   it is not loaded again). */
static PyObject *
bind(PyObject *Py_UNUSED(self), PyObject *args)
{
    const char *path = NULL;
    if (!PyArg_ParseTuple(args, "s:bind", &path))
        return NULL;
#ifdef HAVE_DLFCN
    void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (handle == NULL) {
        PyErr_Format(PyExc_ImportError, "selectolax's Lexbor is not loaded from %s", path);
        return NULL;
    }
    struct { void **slot; const char *name; } wanted[] = {
        {(void **)&lx.first_child, "lxb_dom_node_first_child_noi"},
        {(void **)&lx.next, "lxb_dom_node_next_noi"},
        {(void **)&lx.parent, "lxb_dom_node_parent_noi"},
        {(void **)&lx.type, "lxb_dom_node_type_noi"},
        {(void **)&lx.local_name, "lxb_dom_element_local_name"},
        {(void **)&lx.first_attr, "lxb_dom_element_first_attribute_noi"},
        {(void **)&lx.next_attr, "lxb_dom_element_next_attribute_noi"},
        {(void **)&lx.attr_name, "lxb_dom_attr_qualified_name"},
        {(void **)&lx.attr_value, "lxb_dom_attr_value_noi"},
        {(void **)&lx.text_content, "lxb_dom_node_text_content"},
        {(void **)&lx.destroy_text, "lxb_dom_document_destroy_text_noi"},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        *wanted[i].slot = dlsym(handle, wanted[i].name);
        if (*wanted[i].slot == NULL) {
            dlclose(handle);
            PyErr_Format(PyExc_ImportError, "selectolax's Lexbor has no %s", wanted[i].name);
            return NULL;
        }
    }
    ready = 1; /* (the handle is kept: selectolax's module is never unloaded) */
    Py_RETURN_NONE;
#else
    PyErr_SetString(PyExc_ImportError, "no dlopen on this platform");
    return NULL;
#endif
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "bind(path): use the Lexbor of selectolax's extension at path."},
    {"scan", scan, METH_VARARGS,
     "scan(root, document, details): (hrefs, rels, texts, srcs, alts, links, scripts, iframes,"
     " h2s)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sitecrawl.parse._links", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__links(void)
{
    return PyModule_Create(&module);
}
